#include <duet/protocol/errors.hpp>
#include <duet/protocol/meta_keys.hpp>

#include <boost/throw_exception.hpp>

#include <stdexcept>

namespace duet::protocol {

namespace {

class error_category_impl final : public boost::system::error_category {
public:
    char const* name() const noexcept override { return "duet.mcp"; }
    std::string message(int ev) const override {
        return std::string(standard_message(static_cast<errc>(ev)));
    }
};

} // namespace

std::string_view standard_message(errc e) noexcept {
    switch (e) {
    case errc::parse_error:
        return "Parse error";
    case errc::invalid_request:
        return "Invalid Request";
    case errc::method_not_found:
        return "Method not found";
    case errc::invalid_params:
        return "Invalid params";
    case errc::internal_error:
        return "Internal error";
    case errc::resource_not_found:
        return "Resource not found";
    case errc::header_mismatch:
        return "Header mismatch";
    case errc::missing_required_client_capability:
        return "Missing required client capability";
    case errc::unsupported_protocol_version:
        return "Unsupported protocol version";
    case errc::url_elicitation_required:
        return "URL elicitation required";
    }
    return "Unknown error";
}

boost::system::error_category const& error_category() noexcept {
    static error_category_impl const instance;
    return instance;
}

boost::system::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

void throw_exception_from_error(rejection const& r, boost::source_location const& loc) {
    boost::throw_exception(std::runtime_error(r.error.message), loc);
}

unsigned modern_http_status(errc e) noexcept {
    switch (e) {
    case errc::header_mismatch:
    case errc::missing_required_client_capability:
    case errc::unsupported_protocol_version:
    case errc::invalid_params:
    case errc::invalid_request:
    case errc::parse_error:
        return 400;
    case errc::method_not_found:
        return 404;
    default:
        return 200;
    }
}

error_object make_error(errc code, std::string message, boost::json::value data) {
    return error_object{static_cast<std::int32_t>(code), std::move(message), std::move(data)};
}

error_object method_not_found(std::string_view method, std::string_view reason) {
    return make_error(errc::method_not_found, std::string(standard_message(errc::method_not_found)),
                      boost::json::object{{"method", method}, {"reason", reason}});
}

error_object invalid_params(std::string message, boost::json::value data) {
    return make_error(errc::invalid_params, std::move(message), std::move(data));
}

error_object missing_protocol_version(bool modern_enabled, bool legacy_enabled) {
    std::string message = "Invalid params: missing params._meta[\"";
    message += meta_key::protocol_version;
    message += "\"]";
    boost::json::object data;
    data["requiredMetaKey"] = meta_key::protocol_version;
    if (modern_enabled) {
        message += "; modern clients send it on every request (supported: ";
        bool first = true;
        for (auto v : modern_versions) {
            message += first ? "" : ", ";
            message += to_string(v);
            first = false;
        }
        message += ")";
        data["modernVersions"] = to_json(modern_versions);
    }
    if (legacy_enabled) {
        message += "; legacy clients open a session with initialize first (supported: ";
        bool first = true;
        for (auto v : handshake_versions) {
            message += first ? "" : ", ";
            message += to_string(v);
            first = false;
        }
        message += ")";
        data["handshakeVersions"] = to_json(handshake_versions);
    }
    return make_error(errc::invalid_params, std::move(message), std::move(data));
}

error_object unsupported_protocol_version(std::string_view requested) {
    return make_error(
        errc::unsupported_protocol_version, std::string(standard_message(errc::unsupported_protocol_version)),
        boost::json::object{{"supported", advertised_modern_versions()}, {"requested", requested}});
}

error_object header_mismatch(std::string detail) {
    return make_error(errc::header_mismatch, "Header mismatch: " + detail);
}

error_object missing_required_client_capability(boost::json::object required) {
    return make_error(errc::missing_required_client_capability,
                      std::string(standard_message(errc::missing_required_client_capability)),
                      boost::json::object{{"requiredCapabilities", std::move(required)}});
}

error_object resource_not_found(era e, std::string_view uri) {
    std::string message = "Resource not found: ";
    message += uri;
    return make_error(e == era::legacy ? errc::resource_not_found : errc::invalid_params, std::move(message),
                      boost::json::object{{"uri", uri}});
}

error_object internal_error() {
    return make_error(errc::internal_error, std::string(standard_message(errc::internal_error)));
}

error_object invalid_request(std::string message) {
    return make_error(errc::invalid_request, std::move(message));
}

error_object batch_not_allowed() {
    return invalid_request("Invalid Request: JSON-RPC batches are only allowed in a 2025-03-26 session");
}

} // namespace duet::protocol
