// libtensorflow_framework.so: TensorFlow's release ships its C++ runtime in this library beside
// libtensorflow.so, and bindings (TensorFlow.js's Node backend) link both by name. Sluice's
// runtime is all in libtensorflow.so, so this library only has to exist: it exports the
// version, under a Sluice name, and nothing a program could mistake for TensorFlow's C++ API.
extern "C" __attribute__((visibility("default"))) const char* SL_FrameworkLibraryVersion() {
  return "sluice";
}
