import Crypto
import Foundation

/// FitBase's own expiring links to media in the data directory: `/v1/media/<token>`, the token naming the object and
/// the instant the link ends, with an HMAC-SHA-256 over both under a key derived from the master key (every instance
/// of a deployment checks every other's links; a new master key ends every link).
///
/// Token: `base64url(key) "." expiry (Unix seconds) "." base64url(HMAC(key "\n" expiry))`. A changed key, expiry or
/// signature fails the check; a link past its expiry is refused even with a right signature.
struct MediaLinks: Sendable {
    private let secret: SymmetricKey
    /// The public URL links are built on (`FITBASE_PUBLIC_URL`).
    let baseURL: String

    init(secret: SymmetricKey, baseURL: String) {
        self.secret = secret
        self.baseURL = baseURL
    }

    /// Why a link is refused.
    enum Refusal: Error, Equatable {
        /// Not a token this server made, or one changed since.
        case invalid
        /// Made here, and past its expiry.
        case expired
    }

    /// The token for `key`, valid until `expiry` (to the second).
    func token(for key: MediaKey, expiry: Date) -> String {
        let seconds = Int64(expiry.timeIntervalSince1970.rounded(.up))
        return Data(key.path.utf8).base64URLEncoded + "." + String(seconds) + "." + signature(key.path, seconds).base64URLEncoded
    }

    /// The link for `key`, valid until `expiry`.
    func url(for key: MediaKey, expiry: Date) -> String {
        baseURL + "/v1/media/" + token(for: key, expiry: expiry)
    }

    /// The object `token` names, when its signature is right and `now` is before its expiry.
    func key(of token: String, now: Date) throws(Refusal) -> MediaKey {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let keyData = Data(base64URLEncoded: String(parts[0])), let seconds = Int64(parts[1]),
            let mac = Data(base64URLEncoded: String(parts[2])), let path = String(data: keyData, encoding: .utf8),
            HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Data("\(path)\n\(seconds)".utf8), using: secret),
            let key = MediaKey(path)
        else { throw .invalid }
        guard Double(seconds) > now.timeIntervalSince1970 else { throw .expired }
        return key
    }

    /// The expiry a token states (whether or not it is valid: call ``key(of:now:)`` first).
    func expiry(of token: String) -> Date? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let seconds = Int64(parts[1]) else { return nil }
        return Date(timeIntervalSince1970: Double(seconds))
    }

    private func signature(_ path: String, _ seconds: Int64) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Data("\(path)\n\(seconds)".utf8), using: secret))
    }
}
