// The calibration files (calibration.h): each is read into one tree of
// named values (YAML with yaml-cpp, OpenCV's XML with libxml2), then the
// format's fields are taken from it, each missing or misshapen one named.
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <utility>

#include "calibration.h"
#include "rectify.h"

namespace cs {
namespace {

// One value of a file: a number or several (a sequence, or a matrix with
// rows and cols), a text, or a map of named values.
struct Value {
  std::vector<double> numbers;
  bool numeric = false;  // every element a number
  int rows = 0, cols = 0;  // a matrix (OpenCV's opencv-matrix, ROS's rows/cols/data, a sequence of rows)
  std::string text;
  std::map<std::string, Value> children;
  bool is_map = false;
};

bool parse_number(const std::string& s, double* out) {
  const char* b = s.data();
  const char* e = b + s.size();
  while (b < e && (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r')) ++b;
  while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) --e;
  if (b < e && *b == '+') ++b;
  if (b == e) return false;
  const auto r = std::from_chars(b, e, *out);  // locale-independent
  return r.ec == std::errc() && r.ptr == e;
}

std::string read_file(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot be read";
  std::ostringstream s;
  s << in.rdbuf();
  *text = s.str();
  if (text->empty()) return path + ": is empty";
  return {};
}

// A map of rows, cols and data (a matrix as OpenCV's opencv-matrix and
// ROS's camera_info write it, in YAML or XML) becomes that matrix.
void as_matrix(Value* v) {
  const auto r = v->children.find("rows"), c = v->children.find("cols"), d = v->children.find("data");
  if (r == v->children.end() || c == v->children.end() || d == v->children.end() || r->second.numbers.size() != 1 ||
      c->second.numbers.size() != 1 || !d->second.numeric)
    return;
  Value m;
  m.rows = static_cast<int>(r->second.numbers[0]);
  m.cols = static_cast<int>(c->second.numbers[0]);
  m.numbers = d->second.numbers;
  m.numeric = true;
  *v = std::move(m);
}

// ---- YAML (yaml-cpp)

Value from_yaml(const YAML::Node& n) {
  Value v;
  if (n.IsScalar()) {
    v.text = n.Scalar();
    double d = 0;
    if (parse_number(v.text, &d)) {
      v.numbers = {d};
      v.numeric = true;
    }
    return v;
  }
  if (n.IsSequence()) {
    v.numeric = true;
    int rows = 0, cols = -1;
    for (const YAML::Node& e : n) {
      if (e.IsSequence()) {  // a row of a matrix written as a sequence of rows (Kalibr's T_cn_cnm1)
        const Value row = from_yaml(e);
        if (!row.numeric || (cols >= 0 && cols != static_cast<int>(row.numbers.size()))) return Value{};
        cols = static_cast<int>(row.numbers.size());
        v.numbers.insert(v.numbers.end(), row.numbers.begin(), row.numbers.end());
        ++rows;
        continue;
      }
      const Value el = from_yaml(e);
      if (!el.numeric || el.numbers.size() != 1) {
        v.numeric = false;
        continue;
      }
      v.numbers.push_back(el.numbers[0]);
    }
    if (rows > 0) {
      if (rows != static_cast<int>(n.size())) return Value{};  // rows mixed with numbers
      v.rows = rows;
      v.cols = cols;
    }
    return v;
  }
  if (n.IsMap()) {
    v.is_map = true;
    for (const auto& kv : n) v.children[kv.first.as<std::string>()] = from_yaml(kv.second);
    as_matrix(&v);
  }
  return v;
}

std::string parse_yaml(const std::string& path, std::string text, Value* out) {
  // OpenCV writes "%YAML:1.0", which is not a YAML directive (that is
  // "%YAML 1.x"): dropped, the document that follows is plain YAML.
  if (text.rfind("%YAML:", 0) == 0) text.erase(0, text.find('\n') == std::string::npos ? text.size() : text.find('\n'));
  try {
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return path + ": not a YAML map of named fields";
    *out = from_yaml(root);
  } catch (const YAML::Exception& e) {
    return path + ": not valid YAML (line " + std::to_string(e.mark.line + 1) + ": " + e.msg + ")";
  }
  return {};
}

// ---- OpenCV's XML (libxml2)

std::string node_text(xmlNode* n) {
  xmlChar* c = xmlNodeGetContent(n);
  std::string s = c ? reinterpret_cast<const char*>(c) : "";
  if (c) xmlFree(c);
  return s;
}

Value from_xml(xmlNode* n) {
  Value v;
  bool has_elements = false;
  for (xmlNode* c = n->children; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE) has_elements = true;
  if (!has_elements) {
    v.text = node_text(n);
    std::istringstream words(v.text);
    std::string w;
    v.numeric = true;
    while (words >> w) {
      double d = 0;
      if (!parse_number(w, &d)) {
        v.numeric = false;
        v.numbers.clear();
        break;
      }
      v.numbers.push_back(d);
    }
    if (v.numbers.empty()) v.numeric = false;
    return v;
  }
  v.is_map = true;
  for (xmlNode* c = n->children; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE) v.children[reinterpret_cast<const char*>(c->name)] = from_xml(c);
  as_matrix(&v);
  return v;
}

std::string parse_xml(const std::string& path, const std::string& text, Value* out) {
  std::unique_ptr<xmlDoc, void (*)(xmlDoc*)> doc(
      xmlReadMemory(text.data(), static_cast<int>(text.size()), path.c_str(), nullptr,
                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING),
      xmlFreeDoc);
  if (!doc) {
    const xmlError* e = xmlGetLastError();
    std::string why = e && e->message ? e->message : "unreadable";
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return path + ": not valid XML (" + why + (e ? ", line " + std::to_string(e->line) : std::string()) + ")";
  }
  xmlNode* root = xmlDocGetRootElement(doc.get());
  if (!root || std::string(reinterpret_cast<const char*>(root->name)) != "opencv_storage")
    return path + ": an XML file without <opencv_storage> (OpenCV's FileStorage writes one)";
  *out = from_xml(root);
  return {};
}

std::string parse_file(const std::string& path, Value* out) {
  std::string text;
  std::string e = read_file(path, &text);
  if (!e.empty()) return e;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '<') return parse_xml(path, text, out);
  return parse_yaml(path, text, out);
}

// ---- fields

const Value* find(const Value& v, const char* key) {
  const auto it = v.children.find(key);
  return it == v.children.end() ? nullptr : &it->second;
}

std::string shape(const Value& v) {
  if (v.rows > 0) return std::to_string(v.rows) + "x" + std::to_string(v.cols);
  return std::to_string(v.numbers.size()) + " numbers";
}

// `count` numbers from field `key` (any matrix shape holding that many).
std::string numbers(const Value& v, const std::string& file, const char* key, size_t count, double* out) {
  const Value* f = find(v, key);
  if (!f) return file + ": no field " + key;
  if (!f->numeric || f->numbers.size() != count || (f->rows > 0 && static_cast<size_t>(f->rows * f->cols) != count))
    return file + ": field " + key + " must hold " + std::to_string(count) + " numbers, not " +
           (f->numeric ? shape(*f) : "\"" + f->text + "\"");
  for (size_t i = 0; i < count; ++i) out[i] = f->numbers[i];
  return {};
}

std::string integer(const Value& v, const std::string& file, const char* key, int* out) {
  double d = 0;
  std::string e = numbers(v, file, key, 1, &d);
  if (!e.empty()) return e;
  if (d != std::floor(d) || d < 1 || d > 1e6) return file + ": field " + key + " must be a positive whole number";
  *out = static_cast<int>(d);
  return {};
}

std::string text_field(const Value& v, const std::string& file, const char* key, std::string* out) {
  const Value* f = find(v, key);
  if (!f) return file + ": no field " + key;
  if (f->is_map || (f->text.empty() && !f->numbers.empty())) return file + ": field " + key + " must be a word";
  *out = f->text;
  return {};
}

// Distortion coefficients: any count the lens model has (pinhole 4, 5, 8,
// 12 or 14; equidistant 4), as a row or a column.
std::string distortion(const Value& v, const std::string& file, const char* key, CameraIntrinsics* cam) {
  const Value* f = find(v, key);
  if (!f) return file + ": no field " + key;
  if (!f->numeric) return file + ": field " + key + " must hold numbers";
  cam->D = f->numbers;
  return {};
}

// The image size of an OpenCV file where it says one.
std::string opencv_size(const Value& v, const std::string& file, int* w, int* h) {
  if (const Value* s = find(v, "imageSize")) {
    if (!s->numeric || s->numbers.size() != 2) return file + ": field imageSize must hold two numbers";
    *w = static_cast<int>(s->numbers[0]);
    *h = static_cast<int>(s->numbers[1]);
    return {};
  }
  for (auto keys : {std::pair<const char*, const char*>{"image_width", "image_height"}, {"width", "height"}}) {
    if (find(v, keys.first) || find(v, keys.second)) {
      std::string e = integer(v, file, keys.first, w);
      if (e.empty()) e = integer(v, file, keys.second, h);
      return e;
    }
  }
  return {};
}

// ---- the formats

// OpenCV: M1 D1 M2 D2 R T over one or more files.
std::string load_opencv(const std::vector<std::string>& files, const std::vector<Value>& trees,
                        StereoCalibration* c) {
  // Each field from the first file that has it.
  Value merged;
  merged.is_map = true;
  std::map<std::string, std::string> from;
  for (size_t i = 0; i < trees.size(); ++i)
    for (const auto& kv : trees[i].children)
      if (merged.children.emplace(kv.first, kv.second).second) from[kv.first] = files[i];
  std::string all;
  for (size_t i = 0; i < files.size(); ++i) all += (i ? ", " : "") + files[i];
  auto where = [&](const char* key) { return from.count(key) ? from[key] : all; };
  std::string e;
  if (e.empty()) e = numbers(merged, where("M1"), "M1", 9, c->left.K);
  if (e.empty()) e = numbers(merged, where("M2"), "M2", 9, c->right.K);
  if (e.empty()) e = distortion(merged, where("D1"), "D1", &c->left);
  if (e.empty()) e = distortion(merged, where("D2"), "D2", &c->right);
  if (e.empty()) {
    const Value* r = find(merged, "R");
    if (r && r->numeric && r->numbers.size() == 3) {
      // A rotation vector (Rodrigues), as some tools write R.
      rotation_from_vector(r->numbers.data(), c->R);
    } else {
      e = numbers(merged, where("R"), "R", 9, c->R);
    }
  }
  if (e.empty()) e = numbers(merged, where("T"), "T", 3, c->T);
  int w = 0, h = 0;
  for (size_t i = 0; i < trees.size() && e.empty(); ++i) e = opencv_size(trees[i], files[i], &w, &h);
  if (!e.empty()) return e;
  c->left.width = c->right.width = w;
  c->left.height = c->right.height = h;
  c->has_pose = true;
  c->source = "OpenCV " + all;
  return {};
}

std::string ros_lens(const std::string& file, const std::string& model, CameraIntrinsics* cam) {
  if (model == "plumb_bob" || model == "rational_polynomial" || (model.empty() && cam->D.empty())) {
    cam->lens = LensModel::Pinhole;
    return {};
  }
  if (model == "equidistant" || model == "fisheye") {
    cam->lens = LensModel::Equidistant;
    return {};
  }
  return file + ": distortion_model \"" + model +
         "\" is not supported (plumb_bob, rational_polynomial and equidistant are)";
}

// ROS: two camera_info files, each with its rectification and projection.
std::string load_ros(const std::vector<std::string>& files, const std::vector<Value>& trees, StereoCalibration* c) {
  CameraIntrinsics* cams[2] = {&c->left, &c->right};
  double* rs[2] = {c->R1, c->R2};
  double* ps[2] = {c->P1, c->P2};
  for (int k = 0; k < 2; ++k) {
    const Value& v = trees[k];
    const std::string& f = files[k];
    std::string model;
    std::string e = integer(v, f, "image_width", &cams[k]->width);
    if (e.empty()) e = integer(v, f, "image_height", &cams[k]->height);
    if (e.empty()) e = numbers(v, f, "camera_matrix", 9, cams[k]->K);
    if (e.empty()) e = distortion(v, f, "distortion_coefficients", cams[k]);
    if (e.empty() && find(v, "distortion_model")) e = text_field(v, f, "distortion_model", &model);
    if (e.empty()) e = ros_lens(f, model, cams[k]);
    if (e.empty()) e = numbers(v, f, "rectification_matrix", 9, rs[k]);
    if (e.empty()) e = numbers(v, f, "projection_matrix", 12, ps[k]);
    if (!e.empty()) return e;
  }
  c->has_rectification = true;
  c->source = "ROS camera_info " + files[0] + ", " + files[1];
  return {};
}

std::string kalibr_camera(const Value& chain, const std::string& file, const char* name, CameraIntrinsics* cam) {
  const Value* v = find(chain, name);
  if (!v || !v->is_map) return file + ": no camera " + name;
  const std::string where = file + " " + name;
  std::string model, dist;
  double in[4] = {};
  double res[2] = {};
  std::string e = text_field(*v, where, "camera_model", &model);
  if (e.empty() && model != "pinhole")
    e = where + ": camera_model \"" + model + "\" is not supported (pinhole is)";
  if (e.empty()) e = numbers(*v, where, "intrinsics", 4, in);
  if (e.empty()) e = numbers(*v, where, "resolution", 2, res);
  if (e.empty()) e = text_field(*v, where, "distortion_model", &dist);
  if (e.empty() && dist != "none") e = distortion(*v, where, "distortion_coeffs", cam);
  if (!e.empty()) return e;
  if (dist == "radtan") {
    cam->lens = LensModel::Pinhole;
  } else if (dist == "equidistant") {
    cam->lens = LensModel::Equidistant;
  } else if (dist == "none") {
    cam->D.clear();
  } else {
    return where + ": distortion_model \"" + dist + "\" is not supported (radtan, equidistant and none are)";
  }
  const double k[9] = {in[0], 0, in[2], 0, in[1], in[3], 0, 0, 1};
  for (int i = 0; i < 9; ++i) cam->K[i] = k[i];
  cam->width = static_cast<int>(res[0]);
  cam->height = static_cast<int>(res[1]);
  return {};
}

// Kalibr: cam0 and cam1 of one camchain, cam1's T_cn_cnm1 the pose.
std::string load_kalibr(const std::string& file, const Value& chain, StereoCalibration* c) {
  std::string e = kalibr_camera(chain, file, "cam0", &c->left);
  if (e.empty()) e = kalibr_camera(chain, file, "cam1", &c->right);
  if (!e.empty()) return e;
  double t[16] = {};
  e = numbers(*find(chain, "cam1"), file + " cam1", "T_cn_cnm1", 16, t);
  if (!e.empty()) return e;
  for (int r = 0; r < 3; ++r) {
    for (int k = 0; k < 3; ++k) c->R[3 * r + k] = t[4 * r + k];
    c->T[r] = t[4 * r + 3];
  }
  c->has_pose = true;
  c->source = "Kalibr " + file;
  return {};
}

std::vector<std::string> split_files(const std::string& spec) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream s(spec);
  while (std::getline(s, cur, ',')) {
    const size_t a = cur.find_first_not_of(" \t"), b = cur.find_last_not_of(" \t");
    out.push_back(a == std::string::npos ? std::string() : cur.substr(a, b - a + 1));
  }
  return out;
}

}  // namespace

std::string load_stereo_calibration(const std::string& spec, StereoCalibration* out) {
  const std::vector<std::string> files = split_files(spec);
  if (files.empty()) return "no calibration file named";
  for (const std::string& f : files)
    if (f.empty()) return "calibration \"" + spec + "\": an empty file name";
  std::vector<Value> trees(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    std::string e = parse_file(files[i], &trees[i]);
    if (!e.empty()) return e;
  }
  StereoCalibration c;
  std::string e;
  const bool ros = find(trees[0], "camera_matrix") != nullptr;
  if (ros) {
    if (files.size() != 2) return files[0] + ": a ROS camera_info file needs its pair: calibration=left.yaml,right.yaml";
    if (!find(trees[1], "camera_matrix")) return files[1] + ": not a ROS camera_info file like " + files[0];
    e = load_ros(files, trees, &c);
  } else if (find(trees[0], "cam0")) {
    if (files.size() != 1) return files[0] + ": a Kalibr camchain is one file";
    e = load_kalibr(files[0], trees[0], &c);
  } else {
    e = load_opencv(files, trees, &c);
  }
  if (e.empty()) e = check_calibration(c, c.source);
  if (!e.empty()) return e;
  *out = c;
  return {};
}

std::string check_calibration(const StereoCalibration& c, const std::string& where) {
  const CameraIntrinsics* cams[2] = {&c.left, &c.right};
  const char* names[2] = {"left", "right"};
  for (int k = 0; k < 2; ++k) {
    const CameraIntrinsics& cam = *cams[k];
    const std::string who = where + ": the " + names[k] + " camera's ";
    for (double x : cam.K)
      if (!std::isfinite(x)) return who + "camera matrix holds a number that is not finite";
    if (!(cam.K[0] > 0) || !(cam.K[4] > 0)) return who + "focal lengths (fx, fy) must be positive";
    if (cam.K[3] != 0 || cam.K[6] != 0 || cam.K[7] != 0 || std::fabs(cam.K[8] - 1) > 1e-9)
      return who + "camera matrix must read fx s cx / 0 fy cy / 0 0 1";
    const size_t n = cam.D.size();
    if (cam.lens == LensModel::Pinhole && n != 0 && n != 4 && n != 5 && n != 8)
      return who + "distortion has " + std::to_string(n) + " coefficients (the pinhole model takes 4, 5 or 8)";
    if (cam.lens == LensModel::Equidistant && n != 4)
      return who + "distortion has " + std::to_string(n) + " coefficients (the equidistant model takes 4)";
    for (double x : cam.D)
      if (!std::isfinite(x)) return who + "distortion holds a number that is not finite";
  }
  if ((c.left.width || c.right.width) &&
      (c.left.width != c.right.width || c.left.height != c.right.height))
    return where + ": the two cameras' image sizes differ (" + std::to_string(c.left.width) + "x" +
           std::to_string(c.left.height) + " and " + std::to_string(c.right.width) + "x" +
           std::to_string(c.right.height) + ")";
  if (c.has_pose) {
    if (!is_rotation(c.R)) return where + ": R is not a rotation (orthonormal, determinant 1)";
    const double b = std::sqrt(c.T[0] * c.T[0] + c.T[1] * c.T[1] + c.T[2] * c.T[2]);
    if (!(b > 0) || !std::isfinite(b)) return where + ": T is zero: the two cameras are at one place (no baseline)";
  }
  if (c.has_rectification) {
    if (!is_rotation(c.R1) || !is_rotation(c.R2))
      return where + ": a rectification_matrix is not a rotation (orthonormal, determinant 1)";
    if (!(c.P1[0] > 0) || !(c.P2[0] > 0) || !(c.P1[5] > 0))
      return where + ": a projection_matrix has no positive focal length";
    if (!(c.P2[3] != 0)) return where + ": the right projection_matrix has no baseline (its P[3], -fx * baseline, is 0)";
  }
  return {};
}

}  // namespace cs
