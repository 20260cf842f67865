// Registers the plugin's elements; nothing else lives here.
#include <gst/gst.h>

#include "config.h"

#ifndef PACKAGE
#define PACKAGE "gst-cudastereo"
#endif
#include "gstcudastereo.h"

static gboolean plugin_init(GstPlugin* plugin) { return GST_ELEMENT_REGISTER(cudastereo, plugin); }

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, cudastereo,
                  "Real-time stereo disparity (progressive multi-resolution adaptive windows)", plugin_init,
                  PACKAGE_VERSION, "LGPL", "gst-cudastereo", "https://github.com/gst-cudastereo")
