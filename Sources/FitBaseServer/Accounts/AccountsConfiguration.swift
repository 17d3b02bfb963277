import Foundation

/// Settings of account e-mail and abuse limits, from the environment.
///
/// | environment | meaning | default |
/// |---|---|---|
/// | `FITBASE_APP_NAME` | the app's name in e-mails and on the link pages | `FitBase` |
/// | `FITBASE_TRUSTED_PROXIES` | comma list of proxy addresses or networks (`10.0.0.0/8`, `::1`) whose `X-Forwarded-For` is believed | empty: the socket's peer is the client |
/// | `FITBASE_PASSWORD_HASH_SLOTS` | password hashes that may run or wait at once; more get 503 `busy` | twice the cores |
/// | `FITBASE_UNVERIFIED_ACCOUNT_DAYS` | days after which a password account whose address was never verified is deleted, or `off` | `7` |
///
/// SMTP (`FITBASE_SMTP_URL`, `FITBASE_MAIL_FROM`, `FITBASE_SMTP_CA_FILE`) is read by ``SMTPConfiguration``; without
/// it e-mail is written to the log — on a server bound to a loopback address only, unless `FITBASE_MAIL=log` says so
/// explicitly (the log then holds sign-in and reset links: see ``ServerConfiguration``).
public struct AccountsConfiguration: Sendable, Equatable {
    public var appName = "FitBase"
    public var trustedProxies: [String] = []
    public var passwordHashSlots: Int?
    /// Where e-mail goes; `nil` logs it instead.
    public var smtp: SMTPConfiguration?
    /// `FITBASE_MAIL=log`: write e-mail to the log even on a server others can reach.
    public var logsMail = false
    /// Days a password account may stay unverified before it is deleted; `nil` keeps them.
    public var unverifiedAccountDays: Int? = 7

    public init(appName: String = "FitBase", trustedProxies: [String] = [], passwordHashSlots: Int? = nil, smtp: SMTPConfiguration? = nil) {
        self.appName = appName
        self.trustedProxies = trustedProxies
        self.passwordHashSlots = passwordHashSlots
        self.smtp = smtp
    }

    /// `From:` of every e-mail: `FITBASE_MAIL_FROM` with SMTP, else the app's name at a local address (logged only).
    var sender: String { smtp?.sender ?? "\(appName) <no-reply@localhost>" }

    /// The trusted proxies, parsed (``resolve(environment:)`` validated them).
    var trustedProxyRanges: [AddressRange] { trustedProxies.compactMap(AddressRange.init) }

    static func resolve(environment: [String: String]) throws(ConfigurationError) -> AccountsConfiguration {
        var configuration = AccountsConfiguration()
        if let name = environment["FITBASE_APP_NAME"]?.trimmingCharacters(in: .whitespaces), !name.isEmpty {
            guard name.count <= 60, !name.contains(where: { $0.isNewline }) else {
                throw ConfigurationError(setting: "app-name", source: "FITBASE_APP_NAME", value: name, expected: "a name of at most 60 characters on one line")
            }
            configuration.appName = name
        }
        configuration.trustedProxies = (environment["FITBASE_TRUSTED_PROXIES"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if let bad = configuration.trustedProxies.first(where: { AddressRange($0) == nil }) {
            throw ConfigurationError(
                setting: "trusted-proxies", source: "FITBASE_TRUSTED_PROXIES", value: bad, expected: "IP addresses or networks such as 10.0.0.0/8 or fd00::/8"
            )
        }
        if let text = environment["FITBASE_PASSWORD_HASH_SLOTS"] {
            guard let slots = Int(text.trimmingCharacters(in: .whitespaces)), (1...10_000).contains(slots) else {
                throw ConfigurationError(setting: "password-hash-slots", source: "FITBASE_PASSWORD_HASH_SLOTS", value: text, expected: "an integer from 1 to 10000")
            }
            configuration.passwordHashSlots = slots
        }
        if let text = environment["FITBASE_UNVERIFIED_ACCOUNT_DAYS"]?.trimmingCharacters(in: .whitespaces).lowercased() {
            if text == "off" {
                configuration.unverifiedAccountDays = nil
            } else {
                guard let days = Int(text), (1...3650).contains(days) else {
                    throw ConfigurationError(
                        setting: "unverified-account-days", source: "FITBASE_UNVERIFIED_ACCOUNT_DAYS", value: text, expected: "a number of days from 1 to 3650, or off"
                    )
                }
                configuration.unverifiedAccountDays = days
            }
        }
        if let text = environment["FITBASE_MAIL"]?.trimmingCharacters(in: .whitespaces).lowercased(), !text.isEmpty {
            guard text == "log" else { throw ConfigurationError(setting: "mail", source: "FITBASE_MAIL", value: text, expected: "log (or unset)") }
            configuration.logsMail = true
        }
        configuration.smtp = try SMTPConfiguration.resolve(environment: environment)
        return configuration
    }
}
