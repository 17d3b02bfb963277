import Foundation
import NIOSSL

/// Where and how the server sends e-mail (``SMTPMailer``), from the environment.
///
/// | environment | meaning | default |
/// |---|---|---|
/// | `FITBASE_SMTP_URL` | the SMTP server; setting it turns SMTP delivery on | unset: messages are logged |
/// | `FITBASE_MAIL_FROM` | sender, `no-reply@example.com` or `FitBase <no-reply@example.com>`; required with the URL | — |
/// | `FITBASE_SMTP_CA_FILE` | PEM file of CA certificates trusted besides the system's (a private relay, tests) | system roots only |
///
/// The URL's forms (user and password are percent-decoded, so `%40` is `@` and `%3A` is `:`):
/// - `smtp://user:password@host:587`: STARTTLS, required (delivery fails when the server does not offer it). Port 587
///   by default; any port may be given, such as 25.
/// - `smtp://host:25?tls=optional`: STARTTLS when the server offers it, else plain text. Credentials still go only over
///   TLS: a server without STARTTLS gets no `AUTH`, and delivery fails.
/// - `smtp://host:25?tls=none`: never TLS, for a relay on the same host or a private network; credentials, if given, go
///   in plain text.
/// - `smtps://user:password@host:465`: TLS from the first byte (implicit TLS). Port 465 by default.
///
/// With TLS the server's certificate must chain to a trusted root and name the URL's host (or carry its IP address).
public struct SMTPConfiguration: Sendable, Equatable {
    /// How the connection to the server is protected.
    public enum Security: Sendable, Equatable {
        /// `smtps://`: TLS from the first byte.
        case implicitTLS
        /// `smtp://`: STARTTLS, and no delivery without it.
        case startTLS
        /// `smtp://…?tls=optional`: STARTTLS when offered, else plain text without credentials.
        case startTLSWhenOffered
        /// `smtp://…?tls=none`: plain text, credentials included.
        case none
    }

    /// The user name and password for `AUTH`.
    public struct Credentials: Sendable, Equatable, CustomStringConvertible {
        public var user: String
        public var password: String

        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }

        /// The user only, so that logging a configuration never shows the password.
        public var description: String { "\(user):***" }
    }

    public static let submissionPort = 587
    public static let implicitTLSPort = 465

    /// Host name or IP address of the server; certificates are checked against it.
    public var host: String
    public var port: Int
    public var security: Security
    /// `nil`: send without `AUTH`.
    public var credentials: Credentials?
    /// The `From:` of every message, as given (`FitBase <no-reply@example.com>` or a bare address); already validated.
    public var sender: String
    /// CA certificates trusted for the server's certificate besides the system's.
    public var additionalTrustRoots: [NIOSSLCertificate]

    public init(
        host: String, port: Int? = nil, security: Security = .startTLS, credentials: Credentials? = nil, sender: String,
        additionalTrustRoots: [NIOSSLCertificate] = []
    ) {
        self.host = host
        self.port = port ?? (security == .implicitTLS ? Self.implicitTLSPort : Self.submissionPort)
        self.security = security
        self.credentials = credentials
        self.sender = sender
        self.additionalTrustRoots = additionalTrustRoots
    }

    /// The configuration the environment asks for; `nil` when `FITBASE_SMTP_URL` is unset or empty.
    ///
    /// Errors name the variable; a password in the URL is shown as `***`.
    public static func resolve(environment: [String: String]) throws(ConfigurationError) -> SMTPConfiguration? {
        guard let url = environment["FITBASE_SMTP_URL"]?.trimmingCharacters(in: .whitespaces), !url.isEmpty else { return nil }
        var configuration = try parse(url: url)

        let sender = environment["FITBASE_MAIL_FROM"] ?? ""
        guard MailAddress(parsing: sender) != nil else {
            throw ConfigurationError(
                setting: "mail-from", source: "FITBASE_MAIL_FROM", value: sender,
                expected: "the sender of e-mail, no-reply@example.com or FitBase <no-reply@example.com> (required with FITBASE_SMTP_URL)"
            )
        }
        configuration.sender = sender.trimmingCharacters(in: .whitespaces)

        if let path = environment["FITBASE_SMTP_CA_FILE"], !path.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let certificates = try? NIOSSLCertificate.fromPEMFile(path), !certificates.isEmpty else {
                throw ConfigurationError(
                    setting: "smtp-ca-file", source: "FITBASE_SMTP_CA_FILE", value: path,
                    expected: "a readable PEM file of one or more CA certificates"
                )
            }
            configuration.additionalTrustRoots = certificates
        }
        return configuration
    }

    /// Host, port, security and credentials from the URL; the sender is left empty.
    private static func parse(url: String) throws(ConfigurationError) -> SMTPConfiguration {
        func invalid(_ expected: String) -> ConfigurationError {
            ConfigurationError(setting: "smtp-url", source: "FITBASE_SMTP_URL", value: redactingPassword(in: url), expected: expected)
        }
        let forms = "smtp://user:password@host:587 (STARTTLS), smtps://user:password@host:465 (TLS) or smtp://host:25?tls=none"
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw invalid("a URL such as \(forms), with special characters in the user and password percent-encoded")
        }

        let security: Security
        let tlsOptions = components.queryItems?.filter { $0.name == "tls" } ?? []
        guard (components.queryItems ?? []).count == tlsOptions.count, tlsOptions.count <= 1 else {
            throw invalid("at most one query parameter, tls=required, tls=optional or tls=none")
        }
        switch (scheme, tlsOptions.first?.value) {
        case ("smtps", nil): security = .implicitTLS
        case ("smtp", nil), ("smtp", "required"): security = .startTLS
        case ("smtp", "optional"): security = .startTLSWhenOffered
        case ("smtp", "none"): security = .none
        case ("smtp", _): throw invalid("tls=required, tls=optional or tls=none")
        case ("smtps", _): throw invalid("no tls parameter with smtps:// (it is always TLS)")
        default: throw invalid("the scheme smtp:// or smtps://, as in \(forms)")
        }

        var host = components.host ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "/" }) else {
            throw invalid("a host, as in \(forms)")
        }
        guard components.port.map({ (1...65_535).contains($0) }) ?? true else {
            throw invalid("a port from 1 to 65535")
        }
        guard ["", "/"].contains(components.path), components.fragment == nil else {
            throw invalid("no path after the host, as in \(forms)")
        }

        var credentials: Credentials? = nil
        switch (components.user, components.password) {
        case (nil, nil):
            break
        case (let user?, let password?) where !user.isEmpty && !password.isEmpty:
            credentials = Credentials(user: user, password: password)
        default:
            throw invalid("both a user and a password (smtp://user:password@host) or neither")
        }
        return SMTPConfiguration(host: host, port: components.port, security: security, credentials: credentials, sender: "")
    }

    /// `url` with everything between the user's `:` and the last `@` replaced by `***`.
    static func redactingPassword(in url: String) -> String {
        let authorityStart = url.range(of: "://")?.upperBound ?? url.startIndex
        guard let at = url[authorityStart...].lastIndex(of: "@"), let colon = url[authorityStart..<at].firstIndex(of: ":") else {
            return url
        }
        return url[...colon] + "***" + url[at...]
    }
}
