// The element's rectification (issue 40): the `calibration` property's
// files read once per start (and again when the property changes), the
// views' maps made for the negotiated size once per (files, crop, size);
// the maps go to the engine in its parameters, and
// output-mode=depth takes baseline and focal length from them unless the
// properties set their own. GStreamer-free: the caller posts what fails.
#pragma once

#include <memory>
#include <string>

#include "rectify.h"
#include "settings.h"

namespace cs_gst {

struct Rectification {
  // What the maps were made for, and the maps (null: none).
  std::string spec;
  double alpha = -1;
  int width = 0, height = 0;
  std::shared_ptr<const cs::RectificationMaps> maps;
  std::string source;  // the files as calibration.h names them
  // The files last read (empty: none) and what they hold.
  std::string read_spec;
  cs::StereoCalibration calibration;
};

// Makes *s's rectification for views of width x height (cached in *r: the
// maps are made again only when the property, the crop or the size changed,
// the files read again only when the property changed), and puts it in s->params.rectification; a baseline and focal
// length not set take the calibration's. *changed: the maps differ from the
// engine's (set_params needed). Empty on success, else the reason naming
// the file and the field.
std::string apply_rectification(Settings* s, int width, int height, Rectification* r, bool* changed);

// At start: forgets what *r held (a file edited since the last run is read
// anew) and reads the files `spec` names (calibration.h) into it, so that a
// missing or malformed file stops the element before any caps; what depends
// on the views' size is checked by apply_rectification. Empty when readable
// (or spec is empty), else the reason naming the file and the field.
std::string read_calibration_files(const std::string& spec, Rectification* r);

}  // namespace cs_gst
