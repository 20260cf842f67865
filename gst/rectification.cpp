#include "rectification.h"

namespace cs_gst {

namespace {

// The files `spec` names into r->calibration, unless they were the last
// read; on failure nothing is kept as read.
std::string read_calibration(const std::string& spec, Rectification* r) {
  if (spec == r->read_spec) return {};
  r->read_spec.clear();
#if CS_HAVE_CALIBRATION
  const std::string e = cs::load_stereo_calibration(spec, &r->calibration);
#else
  const std::string e = "this build reads no calibration files (yaml-cpp and libxml2 were missing when it was built)";
#endif
  if (e.empty()) r->read_spec = spec;
  return e.empty() ? e : "calibration: " + e;
}

}  // namespace

std::string read_calibration_files(const std::string& spec, Rectification* r) {
  *r = Rectification();
  return spec.empty() ? std::string() : read_calibration(spec, r);
}

std::string apply_rectification(Settings* s, int width, int height, Rectification* r, bool* changed) {
  *changed = false;
  if (s->calibration.empty()) {
    *changed = r->maps != nullptr;
    *r = Rectification();
    s->params.rectification.reset();
    return {};
  }
  if (s->calibration != r->spec || s->rectify_alpha != r->alpha || width != r->width || height != r->height) {
    std::string e = read_calibration(s->calibration, r);
    cs::StereoRectification rect;
    if (e.empty()) {
      e = cs::stereo_rectify(r->calibration, width, height, s->rectify_alpha, &rect);
      if (!e.empty()) e = "calibration: " + e;
    }
    if (!e.empty()) {
      *r = Rectification();
      s->params.rectification.reset();
      return e;
    }
    r->spec = s->calibration;
    r->alpha = s->rectify_alpha;
    r->width = width;
    r->height = height;
    r->maps = cs::make_rectification_maps(r->calibration, rect);
    r->source = r->calibration.source;
    *changed = true;
  }
  s->params.rectification = r->maps;
  const cs::StereoRectification& g = r->maps->geometry;
  if (!(s->baseline_m > 0)) s->baseline_m = g.baseline();
  if (!(s->focal_px > 0)) s->focal_px = g.focal();
  return {};
}

}  // namespace cs_gst
