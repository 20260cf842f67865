#include "input.h"

#include <string>

#include "geometry.h"
#if HAVE_GST_CUDA
#include <gst/cuda/gstcudamemory.h>

#include "cuda_memory.h"
#endif

namespace cs_gst {

bool input_on_device(GstCudaStereo* self, GstBuffer* buf) {
#if HAVE_GST_CUDA
  return readable_on_device(buf, PRIV(self)->engine_ctx);
#else
  (void)self;
  (void)buf;
  return false;
#endif
}

bool map_input(GstCudaStereo* self, GstBuffer* buf, const GstVideoInfo& info, const char* pad_name,
               bool device, GstVideoFrame* frame, bool* gpu_failed) {
  GstCudaStereoPrivate* priv = PRIV(self);
#if !HAVE_GST_CUDA
  (void)device;  // no CUDA memory without GStreamer's CUDA library
  (void)gpu_failed;
#endif
  const gsize size = gst_buffer_get_size(buf);
  std::string problem;
  if (!gst_buffer_get_video_meta(buf) && size < GST_VIDEO_INFO_SIZE(&info)) {
    problem = "buffer on " + std::string(pad_name) + " holds " + std::to_string(size) + " bytes, fewer than the " +
              std::to_string(GST_VIDEO_INFO_SIZE(&info)) + " its caps (" + describe_info(info) + ") need";
  } else if (!gst_video_frame_map(frame, &info, buf,
#if HAVE_GST_CUDA
                                  device ? static_cast<GstMapFlags>(GST_MAP_READ | GST_MAP_CUDA) :
#endif
                                         GST_MAP_READ)) {
    problem = "buffer on " + std::string(pad_name) + " (" + std::to_string(size) +
              " bytes) cannot be mapped as " + describe_info(info) + " (video meta out of bounds?)";
  }
  if (problem.empty()) return true;
#if HAVE_GST_CUDA
  if (holds_cuda_memory(buf) && (gst_buffer_get_video_meta(buf) || size >= GST_VIDEO_INFO_SIZE(&info))) {
    *gpu_failed = true;
    GST_ELEMENT_ERROR(self, RESOURCE, READ,
                      ("Could not read a frame in CUDA memory on %s: the GPU or its driver failed (see the log)",
                       pad_name),
                      ("%s", problem.c_str()));
    return false;
  }
#endif
  GST_INFO_OBJECT(self, "%s", problem.c_str());
  if (!priv->warned_short) {
    priv->warned_short = true;
    GST_ELEMENT_WARNING(self, STREAM, FORMAT, ("Input buffer too short: %s", problem.c_str()),
                        ("The frame gets an all-invalid output frame; later cases are only logged."));
  }
  return false;
}

}  // namespace cs_gst
