// Functions of shared objects found at run time (the MKL and the oneDNN that Paddle's wheel
// ships): each library opened once, each symbol looked up once, both kept for the process.
#pragma once

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "paddle_ext.h"

// The address of `name` in `library`, or null where the library has none; a library that cannot be
// opened fails the kernel with dlerror's reason.
inline void* FindSymbol(const std::string& library, const char* name) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, void*> found;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(library, std::string(name));
  const auto known = found.find(key);
  if (known != found.end()) return known->second;
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  PD_CHECK(handle != nullptr, "cannot load ", library, ": ", dlerror());
  void* symbol = dlsym(handle, name);
  found.emplace(key, symbol);
  return symbol;
}

// `name` in `library` as a function of type F; fails the kernel where the library has none.
template <typename F>
F RequiredSymbol(const std::string& library, const char* name) {
  void* symbol = FindSymbol(library, name);
  PD_CHECK(symbol != nullptr, library, " has no ", name);
  return reinterpret_cast<F>(symbol);
}
