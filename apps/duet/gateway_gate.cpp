#include "gateway_gate.hpp"

#include <duet/protocol/errors.hpp>

#include <cmath>

namespace duet::apps {

namespace {

std::string caller_key(transport::gate_facts const& f) {
    if (f.caller && f.caller->token) {
        if (!f.caller->token->subject.empty())
            return "sub:" + f.caller->token->subject;
        if (!f.caller->token->client_id.empty())
            return "client:" + f.caller->token->client_id;
    }
    if (f.caller && !f.caller->tls_subject.empty())
        return "tls:" + f.caller->tls_subject;
    return "peer:" + std::string(f.peer_address);
}

std::string rate_text(gateway::rate r) {
    auto number = [](double d) {
        auto text = std::to_string(d);
        text.erase(text.find_last_not_of('0') + 1);
        if (text.ends_with('.'))
            text.pop_back();
        return text;
    };
    return number(r.per_second) + " per second (bursts of " + number(r.burst) + ")";
}

transport::gate_refusal refused(std::string what, std::string limit, gateway::rate r,
                                std::chrono::milliseconds wait) {
    auto const seconds = std::max<long long>(1, static_cast<long long>(std::ceil(wait.count() / 1000.0)));
    transport::gate_refusal out;
    out.http_status = 429;
    out.retry_after = std::chrono::seconds(seconds);
    out.error = protocol::make_error(protocol::errc::internal_error,
                                     "Rate limit exceeded: " + what + " may make " + rate_text(r) +
                                         "; retry in " + std::to_string(seconds) + "s",
                                     boost::json::object{{"limit", limit}, {"retryAfterSeconds", seconds}});
    return out;
}

} // namespace

void rate_gate::set(std::optional<gateway::rate> per_caller, std::map<std::string, gateway::rate> per_tool) {
    std::lock_guard lock(mutex_);
    auto next = std::make_shared<limits>();
    if (per_caller)
        next->per_caller = limits_->per_caller && limits_->per_caller->limit() == *per_caller
                               ? limits_->per_caller
                               : std::make_shared<gateway::rate_limiter>(*per_caller);
    for (auto const& [tool, r] : per_tool) {
        auto const kept = limits_->per_tool.find(tool);
        next->per_tool[tool] = kept != limits_->per_tool.end() && kept->second->limit() == r
                                   ? kept->second
                                   : std::make_shared<gateway::rate_limiter>(r, 1);
    }
    limits_ = std::move(next);
}

std::optional<transport::gate_refusal> rate_gate::check(transport::gate_facts const& facts) const {
    std::shared_ptr<limits const> now_limits;
    {
        std::lock_guard lock(mutex_);
        now_limits = limits_;
    }
    auto const now = gateway::limit_clock::now();
    if (now_limits->per_caller) {
        auto const key = caller_key(facts);
        if (auto wait = now_limits->per_caller->admit(key, now))
            return refused("each caller", "perCaller", now_limits->per_caller->limit(), *wait);
    }
    if (!now_limits->per_tool.empty() && facts.method == "tools/call") {
        auto const* name = facts.params->if_contains("name");
        if (name && name->is_string()) {
            auto const tool = now_limits->per_tool.find(std::string_view(name->get_string()));
            if (tool != now_limits->per_tool.end())
                if (auto wait = tool->second->admit("", now))
                    return refused("the tool " + std::string(name->get_string()), "perTool",
                                   tool->second->limit(), *wait);
        }
    }
    return std::nullopt;
}

} // namespace duet::apps
