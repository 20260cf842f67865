#include "rectification.h"

namespace cs_gst {

std::string check_calibration_files(const std::string& spec) {
  if (spec.empty()) return {};
#if CS_HAVE_CALIBRATION
  cs::StereoCalibration c;
  const std::string e = cs::load_stereo_calibration(spec, &c);
  return e.empty() ? e : "calibration: " + e;
#else
  return "calibration: this build reads no calibration files (yaml-cpp and libxml2 were missing when it was built)";
#endif
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
    cs::StereoCalibration c;
#if CS_HAVE_CALIBRATION
    std::string e = cs::load_stereo_calibration(s->calibration, &c);
#else
    std::string e = "this build reads no calibration files (yaml-cpp and libxml2 were missing when it was built)";
#endif
    cs::StereoRectification rect;
    if (e.empty()) e = cs::stereo_rectify(c, width, height, s->rectify_alpha, &rect);
    if (!e.empty()) {
      *r = Rectification();
      s->params.rectification.reset();
      return "calibration: " + e;
    }
    r->spec = s->calibration;
    r->alpha = s->rectify_alpha;
    r->width = width;
    r->height = height;
    r->maps = cs::make_rectification_maps(c, rect);
    r->source = c.source;
    *changed = true;
  }
  s->params.rectification = r->maps;
  const cs::StereoRectification& g = r->maps->geometry;
  if (!(s->baseline_m > 0)) s->baseline_m = g.baseline();
  if (!(s->focal_px > 0)) s->focal_px = g.focal();
  return {};
}

}  // namespace cs_gst
