// `tessera info [--json]`: what this build is and what it found on this machine.
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include <tessera/core/cpu.hpp>
#include <tessera/core/half.hpp>
#include <tessera/core/thread_pool.hpp>
#include <tessera/hal/hal.hpp>
#include <tessera/tune/tune_db.hpp>
#include <tessera/version.hpp>

#include "commands.hpp"

namespace tessera::cli {
namespace {

using nlohmann::json;

std::string human_bytes(std::int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, v == static_cast<std::int64_t>(v) ? "%.0f %s" : "%.1f %s", v,
                units[u]);
  return buf;
}

json device_json(hal::Device& d) {
  const hal::DeviceProperties& p = d.properties();
  return {{"id", to_string(d.loc())},
          {"name", p.name},
          {"vendor", p.vendor},
          {"architecture", p.architecture},
          {"memory_total_bytes", p.memory_total_bytes},
          {"memory_free_bytes", p.memory_free_bytes},
          {"compute_units", p.compute_units},
          {"clock_mhz", p.clock_mhz},
          {"warp_size", p.warp_size},
          {"driver_version", p.driver_version},
          {"runtime_version", p.runtime_version},
          {"fingerprint", d.fingerprint()}};
}

json gather() {
  const CpuInfo& cpu = cpu_info();
  json features = json::object();
  for (int f = 0; f < static_cast<int>(CpuFeature::kCount); ++f) {
    auto feat = static_cast<CpuFeature>(f);
    features[std::string(cpu_feature_name(feat))] = {{"detected", cpu.has(feat)},
                                                     {"usable", cpu.usable(feat)}};
  }
  json caches = json::array();
  for (const CacheInfo& c : cpu.caches)
    caches.push_back({{"level", c.level},
                      {"type", c.type},
                      {"size_bytes", c.size_bytes},
                      {"line_bytes", c.line_bytes},
                      {"ways", c.ways},
                      {"shared_by_threads", c.shared_by_threads}});
  json cap = cpu.max_isa_error                ? json(*cpu.max_isa_error)
             : std::getenv("TESSERA_MAX_ISA") ? json(std::getenv("TESSERA_MAX_ISA"))
                                              : json(nullptr);
  json backends = json::array();
  for (const hal::BackendStatus& st : hal::backends()) {
    json b = {{"name", st.name},
              {"available", st.available},
              {"detail", st.detail},
              {"devices", json::array()}};
    if (st.backend)
      for (int i = 0; i < st.backend->device_count(); ++i)
        b["devices"].push_back(device_json(st.backend->device(i)));
    backends.push_back(b);
  }
  std::string db_path = tune::default_db_path();
  json tune_db = {{"path", db_path}, {"exists", std::filesystem::exists(db_path)}};
  if (tune_db["exists"]) {
    auto db = tune::TuneDb::open(db_path);
    auto count = db.is_ok() ? db->count() : Result<std::int64_t>(db.status());
    if (count.is_ok())
      tune_db["entries"] = *count;
    else
      tune_db["error"] = count.status().to_string();
  } else {
    tune_db["entries"] = 0;
  }
  return {
      {"version", kVersion},
      {"build_type", kBuildType},
      {"compiler", kCompiler},
      {"cpu",
       {{"vendor", cpu.vendor},
        {"model", cpu.model},
        {"family", cpu.family},
        {"model_id", cpu.model_id},
        {"stepping", cpu.stepping},
        {"logical_cpus", cpu.logical_cpus},
        {"isa_detected", isa_name(cpu.detected_isa)},
        {"isa_used", isa_name(cpu.isa())},
        {"max_isa_env", cap},
        {"features", features},
        {"caches", caches}}},
      {"memory",
       {{"total_bytes", cpu.memory_total_bytes}, {"available_bytes", cpu.memory_available_bytes}}},
      {"threads",
       {{"pool", thread_pool().num_threads()},
        {"env", std::getenv("TESSERA_NUM_THREADS") ? json(std::getenv("TESSERA_NUM_THREADS"))
                                                   : json(nullptr)}}},
      {"half_conversions", half_conversion_paths()},
      {"backends", backends},
      {"tune_db", tune_db},
  };
}

void print_text(const json& j) {
  auto row = [](const char* key, const std::string& value) {
    std::printf("%-12s %s\n", key, value.c_str());
  };
  const json& cpu = j["cpu"];
  std::printf("tessera %s (%s build, %s)\n", j["version"].get<std::string>().c_str(),
              j["build_type"].get<std::string>().c_str(), j["compiler"].get<std::string>().c_str());
  row("cpu", cpu["model"].get<std::string>() + " (" + cpu["vendor"].get<std::string>() +
                 ", family " + std::to_string(cpu["family"].get<int>()) + " model " +
                 std::to_string(cpu["model_id"].get<int>()) + ")");
  std::string isa = "detected " + cpu["isa_detected"].get<std::string>() + ", using " +
                    cpu["isa_used"].get<std::string>();
  isa += cpu["max_isa_env"].is_null()
             ? " (no TESSERA_MAX_ISA cap)"
             : " (TESSERA_MAX_ISA=" + cpu["max_isa_env"].get<std::string>() + ")";
  row("isa", isa);
  std::string used, unused;
  for (auto& [name, f] : cpu["features"].items()) {
    if (f["usable"])
      used += name + " ";
    else if (f["detected"])
      unused += name + " ";
  }
  row("features", used.empty() ? "(none)" : used);
  if (!unused.empty()) row("  capped", unused);
  row("cpus", std::to_string(cpu["logical_cpus"].get<int>()) + " in the affinity mask; pool of " +
                  std::to_string(j["threads"]["pool"].get<int>()) + " threads" +
                  (j["threads"]["env"].is_null() ? "" : " (TESSERA_NUM_THREADS)"));
  std::string caches;
  for (const json& c : cpu["caches"]) {
    std::string t = c["type"] == "data" ? "d" : c["type"] == "instruction" ? "i" : "";
    caches += (caches.empty() ? "" : ", ") + std::string("L") +
              std::to_string(c["level"].get<int>()) + t + " " +
              human_bytes(c["size_bytes"].get<std::int64_t>());
  }
  row("caches", caches.empty() ? "unknown" : caches);
  row("memory", human_bytes(j["memory"]["total_bytes"].get<std::int64_t>()) + " total, " +
                    human_bytes(j["memory"]["available_bytes"].get<std::int64_t>()) + " available");
  row("f16/bf16", j["half_conversions"].get<std::string>());
  std::printf("backends\n");
  for (const json& b : j["backends"]) {
    std::printf(
        "  %-10s %s%s\n", b["name"].get<std::string>().c_str(),
        b["available"] ? "available: " : "unavailable: ", b["detail"].get<std::string>().c_str());
    for (const json& d : b["devices"]) {
      std::string line = d["name"].get<std::string>() + ", " +
                         d["architecture"].get<std::string>() + ", " +
                         std::to_string(d["compute_units"].get<int>()) + " compute units, " +
                         human_bytes(d["memory_total_bytes"].get<std::int64_t>());
      if (d["clock_mhz"].get<int>() > 0)
        line += ", " + std::to_string(d["clock_mhz"].get<int>()) + " MHz";
      if (d["warp_size"].get<int>() > 1)
        line += ", warp " + std::to_string(d["warp_size"].get<int>());
      std::printf("    %-8s %s\n", d["id"].get<std::string>().c_str(), line.c_str());
    }
  }
  const json& t = j["tune_db"];
  std::string db = t["path"].get<std::string>();
  if (t.contains("error"))
    db += " (" + t["error"].get<std::string>() + ")";
  else if (!t["exists"])
    db += " (not created yet)";
  else
    db += " (" + std::to_string(t["entries"].get<std::int64_t>()) + " entries)";
  row("tune db", db);
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("info", "Show the build, the CPU, the backends and the tuning database");
  auto json_out = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json_out, "Print one JSON object instead of text");
  cmd->callback([json_out] {
    json j = gather();
    if (*json_out)
      std::cout << j.dump(2) << "\n";
    else
      print_text(j);
  });
}

}  // namespace tessera::cli
