// seed_models OUT_DIR MODEL.onnx...: seeds for the ONNX-import fuzz target made from real
// models: each model's graph as it is, every initializer shrunk to one element of its dtype
// with all dims 1 (the weights of resnet18 are 45 MB of floats a fuzzer would spend its time
// mutating; the graph is what the parser and type inference walk). Written as
// OUT_DIR/<parent folder name>.onnx.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <onnx/onnx_pb.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: seed_models OUT_DIR MODEL.onnx...\n";
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  for (int i = 2; i < argc; ++i) {
    const std::filesystem::path in = argv[i];
    onnx::ModelProto m;
    std::ifstream f(in, std::ios::binary);
    if (!m.ParseFromIstream(&f)) {
      std::cerr << "seed_models: cannot parse " << in << "\n";
      return 1;
    }
    for (onnx::TensorProto& t : *m.mutable_graph()->mutable_initializer()) {
      const int rank = t.dims_size();
      const int type = t.data_type();
      const std::string name = t.name();
      t.Clear();
      t.set_name(name);
      t.set_data_type(type);
      for (int d = 0; d < rank; ++d) t.add_dims(1);
      std::size_t bytes = 4;
      if (type == onnx::TensorProto::INT64 || type == onnx::TensorProto::DOUBLE) bytes = 8;
      if (type == onnx::TensorProto::FLOAT16 || type == onnx::TensorProto::BFLOAT16) bytes = 2;
      if (type == onnx::TensorProto::BOOL || type == onnx::TensorProto::INT8 || type == onnx::TensorProto::UINT8) bytes = 1;
      t.set_raw_data(std::string(bytes, '\0'));
    }
    const std::filesystem::path file = out / (in.parent_path().filename().string() + ".onnx");
    std::ofstream o(file, std::ios::binary);
    if (!m.SerializeToOstream(&o)) {
      std::cerr << "seed_models: cannot write " << file << "\n";
      return 1;
    }
    std::cout << file.string() << ": " << m.ByteSizeLong() << " bytes\n";
  }
  return 0;
}
