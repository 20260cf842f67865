// One frame of the CUDA engine (engine_impl.h): validation, the method's
// coarse range, buffers, inputs, and the conversion, body and finish through
// the frame's graph (frame_graph.h) or straight on the stream; the output
// writes in order across two sets of frames in flight.
#include <algorithm>

#include "config.h"
#include "convert.h"
#include "engine_impl.h"
#include "frame_checks.h"
#include "pyramid.h"
#include "rectification.h"

namespace cs::cuda {

ModelViews CudaEngine::Impl::model_views() const {
  // The model's state (both sets' with a twin: model_home); the frame's own
  // input record and counters.
  const Impl& h = model_state();
  ModelViews m;
  for (int v = 0; v < 2; ++v) {
    m.model[v] = h.model[v].view();
    m.raw[v] = h.raw_test[v].view();
  }
  for (int v = 0; v < 2; ++v) {
    m.cells[v] = h.cell_model[v].view();
    m.cell_fg[v] = h.cell_fg[v].view();
    m.settled[v] = h.cell_settled[v].view();
    m.work[v] = h.model_work[v].view();
    m.raw_any[v] = h.raw_any[v].view();
  }
  m.input = model_input;
  m.pixel_tests = counters->pixel_tests;
  m.frames_seen = h.frames_seen;
  m.params = background_params(params);
  return m;
}


std::string CudaEngine::Impl::prepare_rectification() {
  const RectificationMaps* maps = params.rectification.get();
  if (!maps) {
    for (int v = 0; v < 2; ++v) rect_map[v].release();
    rect_source = nullptr;
    return {};
  }
  if (maps == rect_source) return {};
  CS_CUDA_TRY(cudaStreamSynchronize(stream));  // queued frames may still read the old maps
  for (int v = 0; v < 2; ++v) {
    const Image<RemapPoint>& m = maps->map[v];
    CS_CUDA_TRY(rect_map[v].allocate(m.width, m.height));
    CS_CUDA_TRY(cudaMemcpy2D(rect_map[v].view().data, rect_map[v].view().pitch, m.pixels.data(),
                             m.width * sizeof(RemapPoint), m.width * sizeof(RemapPoint), m.height,
                             cudaMemcpyHostToDevice));
  }
  rect_source = maps;
  return {};
}

std::string CudaEngine::Impl::input_call(const FrameView& left, const FrameView& right, KernelCall* call) {
  ImageView<uint8_t> gray[2][kMaxConvertLevels];
  for (int l = 0; l < converted_levels(); ++l)
    for (int v = 0; v < 2; ++v) gray[v][l] = lv[l].gray[v].view();
  const ModelViews model = model_views();
  frame_format = left.format;
  frame_remap = params.rectification != nullptr;
  // With a calibration, stage 0 is fused: every pixel read through its map.
  const ImageView<const RemapPoint> maps[2] = {rect_map[0].cview(), rect_map[1].cview()};
  const ImageView<uint32_t> colour[2] = {lv[0].colour[0].view(), lv[0].colour[1].view()};
  CS_CUDA_TRY(convert_pair_call(left, right, gray[0], gray[1], converted_levels(),
                                params.background ? &model : nullptr, call,
                                reinterpret_cast<unsigned long long*>(counters), kFrameCounterWords,
                                params.rectification ? maps : nullptr, colour[0].data ? colour : nullptr));
  return {};
}

std::string CudaEngine::Impl::profilable() const {
  if (!have_frame) return "no frame has been processed";
  if (last_from_upload)
    return "the last frame was read from upload slots, which the engine reuses: profile a frame given in host or "
           "device memory";
  return {};
}

std::string CudaEngine::Impl::enqueue_input(const FrameView& left, const FrameView& right) {
  KernelCall call;
  std::string e = input_call(left, right, &call);
  if (!e.empty()) return e;
  CS_CUDA_TRY(call.launch(stream));
  return {};
}

std::string CudaEngine::Impl::enqueue_body(cudaStream_t s, StageTimer* timer) {
  const Params& p = params;
  MethodFrame f = method_frame();
  if (p.background) {
    // The model's pixels, labelled by the cells the conversion tested.
    CS_CUDA_TRY(enqueue_model_pixels(model_views(), width, height, frame_format, frame_remap, s));
    timer->mark("model");
  }
  for (int l = converted_levels(); l < levels; ++l)
    CS_CUDA_TRY(enqueue_downsample_pair(lv[l - 1].gray[0].cview(), lv[l].gray[0].view(),
                                        lv[l - 1].gray[1].cview(), lv[l].gray[1].view(), s));
  timer->mark("pyramid");
  if (p.background) {
    // The masks of every level and their occupancy from the model's raw test.
    const Impl& h = model_state();
    MaskViews mv;
    for (int v = 0; v < 2; ++v) {
      mv.raw[v] = h.raw_test[v].cview();
      for (int l = 0; l < levels; ++l) {
        mv.mask[l][v] = lv[l].mask[v].view();
        if (l < kOccupancyLevels) mv.occupancy[l][v] = lv[l].occupancy[v].view();
      }
    }
    mv.levels = levels;
    mv.dirty = mask_dirty.view().data;
    for (int v = 0; v < 2; ++v) mv.raw_any[v] = h.raw_any[v].cview();
    mv.regions_x = mask_regions_x(width);
    mv.frames_seen = h.frames_seen;
    mv.matched = counters->matched;
    mv.right_foreground = &counters->right_foreground;
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    CS_CUDA_TRY(cudaStreamIsCapturing(s, &capturing));
    const bool captured = capturing == cudaStreamCaptureStatusActive;
    // In the frame's graph the last mask block chooses the method's SWITCH
    // body (frame_switch.h), so that a still frame goes from its masks
    // straight to its finish.
    unsigned long long few_below = 0;
    if (captured && graph.conditions && !timer->in_graph && method->takes_frame_switch(f, &few_below)) {
      CS_CUDA_TRY(make_graph_condition(s, kNoTiles, &f.frame_switch));
      if (f.frame_switch.on) {
        mv.choice.on = true;
        mv.choice.condition = f.frame_switch.handle;
        mv.choice.few_below = few_below;
        mv.choice.whole_from = whole_frame_foreground(width, height);
        mv.choice.done = &counters->masks_done;
      }
    }
    CS_CUDA_TRY(enqueue_masks(mv, width, height, p.morph_radius, s));
    if (peer) {
      // The other set's next frame may run the model's passes from here on
      // (in the graph: an event record node).
      CS_CUDA_TRY(
          cudaEventRecordWithFlags(ev_model, s, captured ? cudaEventRecordExternal : cudaEventRecordDefault));
    }
    timer->mark("background");
  }
  // The method's matching; its finish is the frame's last kernel (finish_call).
  return method->enqueue(f, s, timer);
}

MethodFrame CudaEngine::Impl::method_frame() const {
  MethodFrame f;
  f.params = &params;
  f.limits = &limits;
  f.levels.resize(lv.size());
  for (size_t l = 0; l < lv.size(); ++l) {
    MethodLevel& m = f.levels[l];
    m.width = lv[l].width;
    m.height = lv[l].height;
    m.range = lv[l].range;
    for (int v = 0; v < 2; ++v) {
      m.gray[v] = lv[l].gray[v].cview();
      m.colour[v] = lv[l].colour[v].cview();
      if (params.background) {
        m.mask[v] = lv[l].mask[v].cview();
        if (l < kOccupancyLevels) f.occupancy[l][v] = lv[l].occupancy[v].cview();
      }
    }
  }
  f.confidence = confidence.view();
  f.counters = counters;
  f.side_stream = side_stream;
  f.body_stream = body_stream;
  f.graph_conditions = graph.conditions;
  // The last frame read back (stats).
  if (params.background && counters_host) {
    f.last_foreground_pixels = counters_host->matched[0];
    f.last_right_foreground = counters_host->right_foreground;
  }
  f.fork = ev_fork;
  for (int l = 0; l < kMaxLevels; ++l) f.join[l] = ev_join[l];
  return f;
}

std::string CudaEngine::Impl::prepare_body() {
  std::string e = prepare_rectification();
  if (!e.empty()) return e;
  Params p = params;
  p.coarse_range_factor = frame_factor;
  for (int l = 0; l < levels; ++l) lv[l].range = level_range(p, l, lv[l].width);
  body_factor = frame_factor;
  return method->allocate(method_frame(), stream);
}

std::string CudaEngine::Impl::finish_call(const FrameOutput& out, KernelCall* call) {
  return method->finish_call(method_frame(), writes_output(out) ? out.q4 : disparity_q4.view(), out.encode, call);
}

std::string CudaEngine::Impl::launch_finish(const KernelCall& finish, const FrameOutput& out) {
  if (out.wait_before) CS_CUDA_TRY(cudaStreamWaitEvent(stream, out.wait_before, 0));
  if (writes_output(out)) {
    std::string e = before_output();
    if (!e.empty()) return e;
  }
  CS_CUDA_TRY(finish.launch(stream));
  return {};
}

std::string CudaEngine::Impl::enqueue_finish(StageTimer* timer) {
  KernelCall call;
  const FrameOutput none;
  std::string e = finish_call(none, &call);
  if (e.empty()) e = launch_finish(call, none);
  if (e.empty()) timer->mark("finish");
  return e;
}

std::string CudaEngine::Impl::run_frame_eagerly(const KernelCall& convert, const KernelCall& finish,
                                                const FrameOutput& out) {
  CS_CUDA_TRY(convert.launch(stream));
  StageTimer off;
  std::string e = enqueue_body(stream, &off);
  return e.empty() ? launch_finish(finish, out) : e;
}

// The frame's conversion, body and finish, in that order on the stream
// (the conversion zeroes the counters the finish adds to).
//
// Through the graph, captured on the second frame of a configuration: one
// launch whose first and last nodes get this frame's arguments first
// (set_frame_nodes); a finish that must wait for an event (finish_waits)
// is disabled there and launched after the graph. A frame whose
// conversion or finish is another kernel or grid than the graph's nodes
// (another input format or output form) drops the graph: it runs straight
// on the stream and the next frame is captured. Never is a node launched
// with another frame's arguments: where the runtime refuses an update,
// the graph is dropped and frames go on with the body alone in it.
//
// Straight on the stream: the first frame of a configuration (or of new
// conversion and finish kernels), so that every kernel is loaded outside
// a capture (CUDA loads a module lazily, at its first launch). A capture
// that fails (seen with 16 pipelines decoding H.264 in one process:
// cudaErrorStreamCaptureInvalidated) costs the graph, not the frame: the
// frame runs straight on the stream, the next frame tries again, and
// after kMaxCaptureFailures every frame runs without one.
std::string CudaEngine::Impl::enqueue_frame(const FrameView& left, const FrameView& right, const FrameOutput& out) {
  if (!graph.ready) {
    std::string e = prepare_body();
    if (!e.empty()) return e;
  }
  KernelCall convert, finish;
  std::string e = input_call(left, right, &convert);
  if (e.empty()) e = finish_call(out, &finish);
  if (!e.empty()) return e;
  // One model for both sets of frames in flight: this frame's passes come
  // after those of the frame before it, queued on the other set.
  if (peer && params.background) CS_CUDA_TRY(cudaStreamWaitEvent(stream, peer->ev_model, 0));
  const FrameShape shape{convert.shape(), finish.shape()};
  // The levels' ranges and the method's buffers stay those the graph was
  // made with: only its conversion or finish kernel changed.
  if (graph.ready && graph.frame_nodes && shape != graph.shape) graph.forget();
  // The model's pixel pass in the body reads the input in the form it was
  // captured for (its kernel follows the format and the maps).
  if (graph.ready && params.background && (frame_format != body_format || frame_remap != body_remap))
    graph.forget();
  if (!graph.ready && graph.enabled && graph.body_warm && (!graph.frame_nodes || shape == graph.warm_shape) &&
      graph.capture_failures < FrameGraph::kMaxCaptureFailures) {
    const auto body = [&] {
      StageTimer off;
      return enqueue_body(stream, &off);
    };
    bool in_capture = false;
    body_format = frame_format;
    body_remap = frame_remap;
    e = graph.build(stream, convert, body, finish, &in_capture);
    if (!e.empty() && in_capture && graph.conditions) {
      // Once more without the SWITCH node: a runtime that takes no
      // conditional nodes still gets the graph.
      (void)cudaGetLastError();
      graph.capture_error = e;
      graph.conditions = false;
      in_capture = false;
      e = graph.build(stream, convert, body, finish, &in_capture);
    }
    if (!e.empty()) {
      if (!in_capture) return e;
      (void)cudaGetLastError();  // the capture's error is not the stream's
      graph.capture_error = e;
      ++graph.capture_failures;
    }
  }
  graph.last_graphed = graph.ready;
  if (!graph.ready) {
    e = run_frame_eagerly(convert, finish, out);
    if (e.empty()) {
      graph.body_warm = true;
      graph.warm_shape = shape;
    }
    return e;
  }
  if (!graph.frame_nodes) {
    CS_CUDA_TRY(convert.launch(stream));
    CS_CUDA_TRY(cudaGraphLaunch(graph.exec, stream));
    return launch_finish(finish, out);
  }
  const bool finish_inside = !finish_waits(out);
  if (!graph.set_frame_nodes(convert, finish, finish_inside)) {
    graph.drop();
    graph.forget();
    graph.frame_nodes = false;
    e = run_frame_eagerly(convert, finish, out);
    if (e.empty()) graph.body_warm = true;
    return e;
  }
  CS_CUDA_TRY(cudaGraphLaunch(graph.exec, stream));
  return finish_inside ? std::string() : launch_finish(finish, out);
}

std::string CudaEngine::Impl::check_frame(const FrameView& left, const FrameView& right) const {
  std::string e = check_view_pair(left, right);
  if (!e.empty()) return e;
  if (left.memory != right.memory) return "the left and right views are in different kinds of memory";
  // The kernels keep row offsets of a level's planes in 32 bits and the
  // wide-pixel list packs x and y into 16 and 15 bits.
  if (left.width > kMaxSide || left.height > kMaxSide)
    return "the CUDA engine takes views of up to " + std::to_string(kMaxSide) + " x " + std::to_string(kMaxSide) +
           " pixels, not " + std::to_string(left.width) + " x " + std::to_string(left.height);
  e = params.validate_for_size(left.width, left.height);
  if (e.empty()) e = check_view_planes(left, "left");
  if (e.empty()) e = check_view_planes(right, "right");
  return e;
}

std::string CudaEngine::Impl::run_frame(const FrameView& left, const FrameView& right, cudaStream_t caller,
                                        const FrameOutput& out) {
  std::string e = ensure_device();
  if (e.empty()) e = check_frame(left, right);
  if (e.empty() && out.views.views != ViewsOutput::None) return run_views_frame(left, right, caller, out);
  // The method's coarse range for the frame (its last probe's, read before
  // anything the probe reads may change).
  if (e.empty())
    e = method->begin_frame(params, left.width, left.height, pipeline_levels(params, left.width, left.height),
                            &frame_factor);
  if (e.empty()) e = configure(left.width, left.height);
  if (!e.empty()) return e;
  // The levels' ranges are in the graph's launches.
  if (frame_factor != body_factor) graph.forget();
  if (caller) {
    CS_CUDA_TRY(cudaEventRecord(ev_caller, caller));
    CS_CUDA_TRY(cudaStreamWaitEvent(stream, ev_caller, 0));
  }
  FrameView dl, dr;
  e = staging.stage(left, right, &dl, &dr, copier, stream);
  if (!e.empty()) return e;
  // Inputs in upload slots: the conversion reads them once their upload
  // (on the upload stream) is done; after it they may be refilled. The
  // conversion is inside the frame's graph, so they are given back after
  // the frame's work (the stream's next point after the conversion).
  e = uploads.wait_uploaded(frame_slots, stream);
  if (!e.empty()) return e;
  last_from_upload = !frame_slots.empty();
  e = enqueue_frame(dl, dr, out);
  if (!e.empty()) return e;
  uploads.give_back(&frame_slots, stream);
  // After the frame, outside its graph (the automatic coarse range's probe).
  e = method->end_frame(method_frame(), stream);
  if (!e.empty()) return e;
  last_left = dl;
  last_right = dr;

  FrameStats st;
  st.levels = levels;
  st.coarse_range_factor = frame_factor;
  st.frame_index = ++frame_index;
  if (params.background) {
    const int seen = model_state().frames_seen_host;
    st.warming_up = seen < params.warmup_frames || seen == 0;
    st.background_tests_full = 2ull * width * height;
    // The cells; the counters add the pixels tested (with_counters).
    st.background_tests = st.warming_up ? 0 : 2 * background_cells(width, height);
    count_model_frame();
  }
  // The matching work of a full frame (the counters give the model's).
  for (int l = 0; l < method->matched_levels(levels); ++l)
    st.matched_pixels_full += static_cast<uint64_t>(lv[l].width) * lv[l].height;
  st.matched_pixels = st.matched_pixels_full;
  pending = st;
  have_frame = true;
  return {};
}

std::string CudaEngine::Impl::run_views_frame(const FrameView& left, const FrameView& right, cudaStream_t caller,
                                              const FrameOutput& out) {
  std::string e = prepare_rectification();
  if (!e.empty()) return e;
  if (caller) {
    CS_CUDA_TRY(cudaEventRecord(ev_caller, caller));
    CS_CUDA_TRY(cudaStreamWaitEvent(stream, ev_caller, 0));
  }
  FrameView dl, dr;
  e = staging.stage(left, right, &dl, &dr, copier, stream);
  if (e.empty()) e = uploads.wait_uploaded(frame_slots, stream);
  if (!e.empty()) return e;
  if (out.wait_before) CS_CUDA_TRY(cudaStreamWaitEvent(stream, out.wait_before, 0));
  e = before_output();
  if (!e.empty()) return e;
  // Nothing matched: the frame's counts (stats) are zero.
  CS_CUDA_TRY(cudaMemsetAsync(counters, 0, sizeof(FrameCounters), stream));
  const ImageView<const RemapPoint> maps[2] = {rect_map[0].cview(), rect_map[1].cview()};
  CS_CUDA_TRY(enqueue_views_output(dl, dr, params.rectification ? maps : nullptr, out.views, out.encode.dst,
                                   out.encode.pitch, stream));
  uploads.give_back(&frame_slots, stream);
  FrameStats st;
  st.frame_index = ++frame_index;
  pending = st;
  return {};
}

std::string CudaEngine::Impl::before_output() {
  if (peer && peer->output_recorded) CS_CUDA_TRY(cudaStreamWaitEvent(stream, peer->ev_output, 0));
  return {};
}

std::string CudaEngine::Impl::after_output() {
  CS_CUDA_TRY(cudaEventRecord(ev_output, stream));
  output_recorded = true;
  return {};
}

std::string CudaEngine::Impl::finish_caller(cudaStream_t caller) {
  CS_CUDA_TRY(cudaEventRecord(ev_done, stream));
  if (caller) CS_CUDA_TRY(cudaStreamWaitEvent(caller, ev_done, 0));
  return {};
}

FrameOutput CudaEngine::Impl::output_to(const EncodeParams& encode, uint8_t* dst, std::ptrdiff_t pitch, int w,
                                        int h) const {
  FrameOutput o;
  if (encode.views != ViewsOutput::None) {
    o.views = encode;
    o.encode.dst = dst;
    o.encode.pitch = pitch;
    return o;
  }
  if (encode.format == OutputFormat::Confidence) return o;
  if (encode.format == OutputFormat::DisparityQ4) {
    o.q4 = {reinterpret_cast<uint16_t*>(dst), w, h, pitch};
    return o;
  }
  o.encode.args = encode_args(encode, luts);
  o.encode.dst = dst;
  o.encode.pitch = pitch;
  return o;
}

std::string CudaEngine::Impl::encode_confidence(const EncodeParams& encode, uint8_t* dst,
                                                std::ptrdiff_t pitch) {
  if (encode.format != OutputFormat::Confidence) return {};
  std::string e = before_output();
  if (!e.empty()) return e;
  CS_CUDA_TRY(enqueue_encode(disparity_q4.cview(), foreground_view(), encode, luts, dst, pitch, stream,
                             confidence.cview()));
  return {};
}

std::string CudaEngine::Impl::ensure_copy_stream() {
  if (copy_stream) return {};
  int least = 0, greatest = 0;
  CS_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  CS_CUDA_TRY(cudaStreamCreateWithPriority(&copy_stream, cudaStreamNonBlocking, least));
  for (cudaEvent_t* ev : {&ring_copied[0], &ring_copied[1], &ev_encoded, &ev_copied})
    CS_CUDA_TRY(cudaEventCreateWithFlags(ev, cudaEventDisableTiming));
  return {};
}

}  // namespace cs::cuda
