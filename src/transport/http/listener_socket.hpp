// A listening socket as every Duet listener opens one: SO_REUSEADDR, and close-on-exec, since Asio opens and
// accepts without it and a handler that starts a child must not hand it the listening socket.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>

namespace duet::transport::http {

/// Opens `acceptor` on `address`:`port`, binds and listens.
[[nodiscard]] boost::system::error_code open_listener(boost::asio::ip::tcp::acceptor& acceptor,
                                                      boost::asio::ip::address const& address,
                                                      std::uint16_t port);

} // namespace duet::transport::http
