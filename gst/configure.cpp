#include "configure.h"

#include <mutex>
#include <string>

#include "cuda_context_scope.h"
#include "error_text.h"

namespace cs_gst {

bool update_geometry(GstCudaStereo* self) {
  GstCudaStereoPrivate* priv = PRIV(self);
  GstCudaStereoInputLayout layout;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    layout = priv->settings.input_layout;
  }
  Geometry g;
  const std::string error = resolve_geometry(priv->packed_in, priv->left_in, priv->right_in, layout, &g);
  if (!error.empty()) {
    GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Unusable stereo input: %s", error.c_str()), (nullptr));
    priv->geometry = Geometry();
    return false;
  }
  if (!g.valid) return true;  // still waiting for the second pad's caps
  const bool size_changed = !priv->geometry.valid || g.view_width != priv->geometry.view_width ||
                            g.view_height != priv->geometry.view_height;
  if (!g.same_output_as(priv->geometry)) {
    priv->out_configured = false;
    gst_pad_mark_reconfigure(GST_AGGREGATOR_SRC_PAD(self));
  }
  if (size_changed) {
    if (priv->geometry.valid && priv->engine) {
      GST_INFO_OBJECT(self, "view size changed to %dx%d: background model restarts", g.view_width, g.view_height);
      CudaContextScope cuda_scope(engine_context(priv));
      priv->engine->reset_background();
    }
    priv->invalid_q4 = cs::Image<uint16_t>(g.view_width, g.view_height, 0);
    priv->params_checked = false;
  }
  priv->geometry = g;
  return true;
}

bool apply_settings(GstCudaStereo* self) {
  GstCudaStereoPrivate* priv = PRIV(self);
  bool params_dirty, reset, geometry_dirty;
  {
    std::lock_guard<std::mutex> guard(priv->lock);
    params_dirty = priv->params_dirty;
    reset = priv->reset_requested;
    geometry_dirty = priv->geometry_dirty;
    priv->params_dirty = priv->reset_requested = priv->geometry_dirty = false;
    priv->active = priv->settings;
  }
  if (geometry_dirty && (priv->packed_in.configured || priv->left_in.configured)) {
    if (!update_geometry(self)) return false;
  }
  if (priv->geometry.valid) {
    bool maps_changed = false;
    const std::string e = apply_rectification(&priv->active, priv->geometry.view_width, priv->geometry.view_height,
                                              &priv->rectification, &maps_changed);
    if (!e.empty()) {
      GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("%s", e.c_str()), (nullptr));
      return false;
    }
    if (maps_changed) {
      GST_INFO_OBJECT(self, "rectifying with %s: focal length %.2f px, baseline %.4f", priv->rectification.source.c_str(),
                      priv->active.focal_px, priv->active.baseline_m);
      params_dirty = true;
    }
  }
  std::string depth_problem = rectified_settings_problem(priv->active);
  // With a calibration, depth's baseline and focal length come from it once
  // the views' size is known (two pads: when their caps are both in, and
  // this runs again before the first pair).
  const bool from_calibration = !priv->active.calibration.empty() && !priv->geometry.valid;
  if (depth_problem.empty() && !from_calibration) depth_problem = depth_settings_problem(priv->active);
  if (!depth_problem.empty()) {
    GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("%s", depth_problem.c_str()), (nullptr));
    return false;
  }
  if (params_dirty) {
    const std::string text = priv->engine->set_params(priv->active.params);
    if (!text.empty()) {
      const cs::ErrorParts error = cs::split_error_text(text);
      GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("Invalid stereo settings: %s", error.message.c_str()),
                        ("%s", error.detail.c_str()));
      return false;
    }
    priv->params_checked = false;
  }
  if (!priv->params_checked && priv->geometry.valid) {
    const std::string error =
        priv->active.params.validate_for_size(priv->geometry.view_width, priv->geometry.view_height);
    if (!error.empty()) {
      GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS,
                        ("Invalid stereo settings for %dx%d views: %s", priv->geometry.view_width,
                         priv->geometry.view_height, error.c_str()),
                        (nullptr));
      return false;
    }
    priv->params_checked = true;
  }
  if (reset) priv->engine->reset_background();
  return true;
}

}  // namespace cs_gst
