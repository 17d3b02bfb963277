import Foundation

/// Reads the links FitBase's server puts in its e-mails and invitations, in both forms:
///
/// | link | app scheme | universal link (the server's public URL) |
/// |---|---|---|
/// | group invite | `fitbase://group/invite/{code}` | `https://{host}/group/invite/{code}` |
/// | e-mail verification | `fitbase://auth/verify?token=…` | `https://{host}/auth/verify?token=…` |
/// | password reset | `fitbase://auth/reset?token=…` | `https://{host}/auth/reset?token=…` |
///
/// The scheme is the server's `FITBASE_APP_SCHEME`; the universal links are the server's `FITBASE_PUBLIC_URL`
/// (a path prefix such as `https://example.com/fitbase` is honoured). Anything else is not a FitBase link (`nil`).
public struct DeepLinkParser: Sendable, Equatable {
    /// The app's URL scheme, lowercased.
    public var appScheme: String
    /// The server's public URLs whose links the app opens (the associated domains).
    public var publicURLs: [URL]

    /// A parser for links of `appScheme` and of the servers at `publicURLs`.
    public init(appScheme: String = "fitbase", publicURLs: [URL] = []) {
        self.appScheme = appScheme.lowercased()
        self.publicURLs = publicURLs
    }

    /// What `url` asks the app to do, or `nil` when it is not a FitBase link or is malformed (``read(_:)`` tells which).
    public func parse(_ url: URL) -> DeepLink? {
        guard case .link(let link) = read(url) else { return nil }
        return link
    }

    /// What `url` is: a FitBase link understood, one that is malformed (no token, an implausible code, a path FitBase
    /// does not make), or another app's or site's link.
    public func read(_ url: URL) -> DeepLinkReading {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let scheme = components.scheme?.lowercased() else {
            return .foreign
        }
        var segments: [String]
        if scheme == appScheme {
            // `fitbase://group/invite/x`: the first segment is the URL's host.
            segments = [components.host ?? ""] + Self.segments(of: components.percentEncodedPath)
        } else if scheme == "https" || scheme == "http", let rest = relativeSegments(components) {
            segments = rest
        } else {
            return .foreign
        }
        segments.removeAll(where: \.isEmpty)
        let token = components.queryItems?.first(where: { $0.name == "token" })?.value.flatMap { $0.isEmpty ? nil : $0 }
        if segments.count == 3, segments[0] == "group", segments[1] == "invite" {
            guard let code = segments[2].removingPercentEncoding, Self.isPlausibleCode(code) else { return .malformed(.invite) }
            return .link(.invite(code: code))
        }
        switch segments {
        case ["auth", "verify"]: return token.map { .link(.verifyEmail(token: $0)) } ?? .malformed(.verifyEmail)
        case ["auth", "reset"]: return token.map { .link(.resetPassword(token: $0)) } ?? .malformed(.resetPassword)
        case ["group", "invite"]: return .malformed(.invite)
        default: return .malformed(nil)
        }
    }

    /// The invite code of `text`: a code as typed or pasted, or an invite link of either form.
    public func inviteCode(from text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.contains("/"), let url = URL(string: trimmed) {
            guard case .invite(let code)? = parse(url) else { return nil }
            return code
        }
        return Self.isPlausibleCode(trimmed) ? trimmed : nil
    }

    /// The path segments after one of the public URLs' paths, when `components` is on one of their hosts.
    private func relativeSegments(_ components: URLComponents) -> [String]? {
        let host = components.host?.lowercased()
        let path = Self.segments(of: components.percentEncodedPath)
        for base in publicURLs {
            guard let baseComponents = URLComponents(url: base, resolvingAgainstBaseURL: false), baseComponents.host?.lowercased() == host,
                baseComponents.port == components.port
            else { continue }
            let prefix = Self.segments(of: baseComponents.percentEncodedPath).filter { !$0.isEmpty }
            let trimmed = path.filter { !$0.isEmpty }
            guard trimmed.starts(with: prefix) else { continue }
            return Array(trimmed.dropFirst(prefix.count))
        }
        return nil
    }

    private static func segments(of path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }

    /// Invite tokens are URL-safe base64 or hex: letters, digits, `-` and `_`, 8 to 128 of them.
    static func isPlausibleCode(_ code: String) -> Bool {
        (8...128).contains(code.count) && code.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }
}

/// What a link the app was opened with is, as ``DeepLinkParser/read(_:)`` finds it.
public enum DeepLinkReading: Sendable, Equatable {
    /// A FitBase link, understood.
    case link(DeepLink)
    /// A link of the app's scheme or under one of the server's public URLs that cannot be read; the kind of link it
    /// looked like (from its path alone), `nil` for a path FitBase does not make.
    case malformed(DeepLink.Kind?)
    /// Not a FitBase link: another scheme, another host.
    case foreign

    /// Where an error report puts a malformed link (`deepLink.invite`, `deepLink` for an unknown path): the kind of
    /// link only, never its token, code, host or query.
    public var reportLocation: String? {
        guard case .malformed(let kind) = self else { return nil }
        return kind.map { "deepLink.\($0.rawValue)" } ?? "deepLink"
    }
}
