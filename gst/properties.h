// The element's GObject interface: the property specs (their enum types are
// property_enums.h's) and the reset-background action signal (installed from
// class_init), and set_property/get_property, which read and write Settings
// under the lock and mark what the streaming thread must redo at the next
// frame.
#pragma once

#include "element_private.h"

namespace cs_gst {

// Installs every property and the reset-background signal on the class, and
// marks the enum types as plugin API.
void install_properties_and_signals(GObjectClass* gobject_class);

void set_property(GstCudaStereo* self, guint prop_id, const GValue* value, GParamSpec* pspec);
void get_property(GstCudaStereo* self, guint prop_id, GValue* value, GParamSpec* pspec);

}  // namespace cs_gst
