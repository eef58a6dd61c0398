#include "listener_socket.hpp"

#include "support/descriptors.hpp"

namespace duet::transport::http {

boost::system::error_code open_listener(boost::asio::ip::tcp::acceptor& acceptor,
                                        boost::asio::ip::address const& address, std::uint16_t port) {
    namespace asio = boost::asio;
    boost::system::error_code ec;
    asio::ip::tcp::endpoint const ep(address, port);
    acceptor.open(ep.protocol(), ec);
    if (!ec)
        support::set_close_on_exec(acceptor.native_handle());
    if (!ec)
        acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec)
        acceptor.bind(ep, ec);
    if (!ec)
        acceptor.listen(asio::socket_base::max_listen_connections, ec);
    return ec;
}

} // namespace duet::transport::http
