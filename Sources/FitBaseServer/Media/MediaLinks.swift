import Crypto
import Foundation

/// FitBase's own expiring links to media in the data directory: `/v1/media/<token>`, the token naming the object and
/// the instant the link ends, with an HMAC-SHA-256 over both under a key derived from the master key (every instance
/// of a deployment checks every other's links; a new master key ends every link).
///
/// Token: `base64url(key) "." expiry (Unix seconds) "." base64url(HMAC(key "\n" expiry))`. A changed key, expiry or
/// signature fails the check; a link past its expiry is refused even with a right signature.
struct MediaLinks: Sendable {
    /// An HMAC keyed with the links' secret and given nothing yet: each check and signature continues a copy of it, so
    /// the key's pads are worked out once, not per link.
    private let keyed: HMAC<SHA256>
    /// The public URL links are built on (`FITBASE_PUBLIC_URL`).
    let baseURL: String

    init(secret: SymmetricKey, baseURL: String) {
        self.keyed = HMAC(key: secret)
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

    /// The object `token` names and when the link ends, when its signature is right and `now` is before its expiry.
    ///
    /// Read from the token's bytes (``MediaLinkToken``: every ranged read of a video passes here, and splitting and
    /// copying strings was a tenth of a 1 MiB range's CPU).
    func key(of token: Substring, now: Date) throws(Refusal) -> (key: MediaKey, expiry: Date) {
        guard let parts = MediaLinkToken(token) else { throw .invalid }
        var check = keyed
        check.update(data: parts.signed)
        // `==` between a code and bytes compares in constant time.
        guard check.finalize() == parts.signature, let key = MediaKey(bytes: Array(parts.keyBytes)) else { throw .invalid }
        let seconds = parts.expirySeconds
        guard Double(seconds) > now.timeIntervalSince1970 else { throw .expired }
        return (key, Date(timeIntervalSince1970: Double(seconds)))
    }

    func key(of token: String, now: Date) throws(Refusal) -> (key: MediaKey, expiry: Date) {
        try key(of: token[...], now: now)
    }

    private func signature(_ path: String, _ seconds: Int64) -> Data {
        var signing = keyed
        signing.update(data: Data("\(path)\n\(seconds)".utf8))
        return Data(signing.finalize())
    }
}
