#include <duet/transport/metrics_endpoint.hpp>

#include "listener_socket.hpp"
#include "support/descriptors.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <thread>

namespace duet::transport {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using asio::ip::tcp;

namespace {
// A scraper sends a small GET; anything slower or larger is not one.
constexpr auto request_timeout = std::chrono::seconds(10);
constexpr auto idle_timeout = std::chrono::seconds(60);
constexpr std::uint32_t max_head_bytes = 8 * 1024; ///< and of a body, which is refused anyway
} // namespace

// The coroutines hold a plain pointer: they live in io_, which goes with this object (its destructor
// destroys them), so they can never outlive it.
class metrics_endpoint::impl {
public:
    impl(std::shared_ptr<metrics::registry const> metrics, metrics_endpoint_options options)
        : metrics_(std::move(metrics)), options_(std::move(options)), acceptor_(io_) {}

    ~impl() { stop(); }

    boost::system::error_code listen() {
        boost::system::error_code ec;
        auto const address = asio::ip::make_address(options_.host, ec);
        if (ec)
            return ec;
        if (auto refused = http::open_listener(acceptor_, address, options_.port))
            return refused;
        port_ = acceptor_.local_endpoint().port();
        asio::co_spawn(io_, accept_loop(this), asio::detached);
        thread_ = std::thread([this] { io_.run(); });
        return {};
    }

    void stop() {
        if (!thread_.joinable())
            return;
        io_.stop();
        thread_.join();
    }

    std::uint16_t port() const noexcept { return port_; }
    std::string url() const {
        auto const host =
            options_.host.find(':') == std::string::npos ? options_.host : "[" + options_.host + "]";
        return "http://" + host + ":" + std::to_string(port_) + options_.path;
    }

private:
    static asio::awaitable<void> accept_loop(impl* self) {
        for (;;) {
            auto accepted = co_await self->acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
            if (std::get<0>(accepted))
                co_return; // stopped, or out of descriptors: scrapes are retried by their scraper
            auto socket = std::move(std::get<1>(accepted));
            support::set_close_on_exec(socket.native_handle());
            asio::co_spawn(self->io_, serve(self, std::move(socket)), asio::detached);
        }
    }

    static asio::awaitable<void> serve(impl* self, tcp::socket socket) {
        beast::tcp_stream stream(std::move(socket));
        beast::flat_buffer buffer;
        for (bool first = true;; first = false) {
            bhttp::request_parser<bhttp::string_body> parser; // a body is read only to be refused (405)
            parser.header_limit(max_head_bytes);
            parser.body_limit(max_head_bytes);
            stream.expires_after(first ? std::chrono::duration_cast<std::chrono::seconds>(request_timeout)
                                       : idle_timeout);
            auto read =
                co_await bhttp::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
            if (std::get<0>(read))
                break;
            auto const& req = parser.get();
            bhttp::response<bhttp::string_body> res;
            res.version(req.version());
            res.keep_alive(req.keep_alive());
            auto const target = std::string_view(req.target().data(), req.target().size());
            auto const path = target.substr(0, target.find('?'));
            if (path != self->options_.path) {
                res.result(bhttp::status::not_found);
                res.set(bhttp::field::content_type, "text/plain; charset=utf-8");
                res.body() = "Not found: metrics are at " + self->options_.path + "\n";
            } else if (req.method() != bhttp::verb::get && req.method() != bhttp::verb::head) {
                res.result(bhttp::status::method_not_allowed);
                res.set(bhttp::field::allow, "GET, HEAD");
                res.set(bhttp::field::content_type, "text/plain; charset=utf-8");
                res.body() = "Method not allowed: GET or HEAD\n";
            } else {
                res.result(bhttp::status::ok);
                res.set(bhttp::field::content_type, metrics::registry::content_type);
                res.body() = self->metrics_->render();
            }
            res.prepare_payload();
            if (req.method() == bhttp::verb::head)
                res.body().clear(); // Content-Length stays the GET's
            stream.expires_after(request_timeout);
            bhttp::response_serializer<bhttp::string_body> sr(res);
            if (req.method() == bhttp::verb::head) {
                auto wrote =
                    co_await bhttp::async_write_header(stream, sr, asio::as_tuple(asio::use_awaitable));
                if (std::get<0>(wrote))
                    break;
            } else {
                auto wrote = co_await bhttp::async_write(stream, sr, asio::as_tuple(asio::use_awaitable));
                if (std::get<0>(wrote))
                    break;
            }
            if (!res.keep_alive())
                break;
        }
        boost::system::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }

    std::shared_ptr<metrics::registry const> metrics_;
    metrics_endpoint_options options_;
    asio::io_context io_{1}; // before what is served on it, so it goes last
    tcp::acceptor acceptor_;
    std::thread thread_;
    std::uint16_t port_ = 0;
};

metrics_endpoint::metrics_endpoint(std::shared_ptr<metrics::registry const> metrics,
                                   metrics_endpoint_options options)
    : impl_(std::make_unique<impl>(std::move(metrics), std::move(options))) {}

metrics_endpoint::~metrics_endpoint() = default;

boost::system::error_code metrics_endpoint::listen() {
    return impl_->listen();
}

std::uint16_t metrics_endpoint::port() const noexcept {
    return impl_->port();
}

std::string metrics_endpoint::url() const {
    return impl_->url();
}

} // namespace duet::transport
