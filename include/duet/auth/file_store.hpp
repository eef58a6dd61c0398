/// @file duet/auth/file_store.hpp
///
/// Tokens and registrations kept in a file, for a command-line client that runs again later: one JSON
/// document (`credentials.json`) in a directory only its owner may read (0700, the file 0600), written whole
/// to a temporary file and renamed over the old one, so a crash never leaves half a file. A file that is not
/// JSON of this shape, belongs to another user or can be read by others is an error in words, and is never
/// overwritten: the user decides what happens to it.
///
///     auto store = auth::file_store::open(auth::default_credentials_dir().value()).value();
#pragma once

#include <duet/auth/credentials.hpp>

#include <memory>
#include <string>

namespace duet::auth {

/// `$XDG_CONFIG_HOME/duet`, else `$HOME/.config/duet`; a usage error when neither variable is set.
[[nodiscard]] client::result<std::string> default_credentials_dir();

class file_store final : public credential_store {
public:
    /// The store in `dir` (created 0700 when missing). An error when the directory or an existing file is
    /// unusable; nothing is written until something is saved.
    [[nodiscard]] static client::result<std::shared_ptr<file_store>> open(std::string dir);

    client::result<std::optional<token_set>> load_tokens(std::string const& resource) override;
    client::result<void> save_tokens(token_set const& tokens) override;
    client::result<void> erase_tokens(std::string const& resource) override;
    client::result<std::optional<client_registration>> load_registration(std::string const& issuer) override;
    client::result<void> save_registration(client_registration const& registration) override;

    /// Every token set kept (`duet auth status`).
    [[nodiscard]] client::result<std::vector<token_set>> all_tokens();
    /// Forgets every token set (`duet logout` without a URL); registrations stay.
    [[nodiscard]] client::result<void> erase_all_tokens();

    /// The file's path.
    [[nodiscard]] std::string const& path() const noexcept { return path_; }

    explicit file_store(std::string path) : path_(std::move(path)) {}

private:
    struct contents {
        std::vector<token_set> tokens;
        std::vector<client_registration> registrations;
    };
    client::result<contents> read() const;
    client::result<void> write(contents const& c) const;

    std::string path_;
};

} // namespace duet::auth
