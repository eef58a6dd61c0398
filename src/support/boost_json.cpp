// The one translation unit that compiles Boost.JSON's implementation (header-only mode), so the library is
// built with the same flags (sanitizers, fuzzer instrumentation) as the code that calls it.
#include <boost/json/src.hpp>
