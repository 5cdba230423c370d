#pragma once
// The data files embedded at build time (generated catalog_data.cpp, see embed_catalog.cmake).
#include <cstddef>

namespace llmsim::spec::detail {

struct EmbeddedFile {
  const char* name;  ///< file name without ".json" (the catalogue id)
  const char* text;  ///< file contents
};

extern const EmbeddedFile kGpuFiles[];
extern const std::size_t kGpuFilesCount;
extern const EmbeddedFile kModelFiles[];
extern const std::size_t kModelFilesCount;

}  // namespace llmsim::spec::detail
