// The one place where the CUDA engine picks a matching method (method.h).
#include "method.h"

namespace cs::cuda {

std::unique_ptr<MatchingMethod> make_method(Method method) {
  switch (method) {
    case Method::Block: return make_block_method();
    case Method::Cross: return make_cross_method();
    case Method::Elas: return make_elas_method();
    case Method::Progressive: break;
  }
  return make_progressive_method();
}

}  // namespace cs::cuda
