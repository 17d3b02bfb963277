import Crypto
import Foundation
import NIOHTTP1
import Synchronization

/// What a ``FakeAPNsServer`` knows and decides, apart from the network: the checks Apple makes on each push, the
/// scripted answers, and the record of what came in. Every connection's streams call ``answer(_:)``.
final class FakeAPNsGateway: Sendable {
    /// One request as the stream handler assembled it.
    struct Request {
        var method: HTTPMethod
        var path: String
        var headers: HTTPHeaders
        var body: Data
        /// The body was longer than the handler keeps (it is too large anyway).
        var bodyTruncated: Bool
    }

    /// What the stream handler writes back.
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: Data
    }

    struct State {
        var accepted: [FakeAPNsServer.Push] = []
        var refusals: [FakeAPNsServer.Refusal] = []
        var providerTokens: Set<String> = []
        /// Tokens whose signature, `kid` and `iss` were checked, with their `iat`.
        var verifiedTokens: [String: Date] = [:]
        var expiredTokens: Set<String> = []
        var connections = 0
        var byDeviceToken: [String: FakeAPNsServer.Answer] = [:]
        var next: [FakeAPNsServer.Answer] = []
    }

    let options: FakeAPNsServer.Options
    let state = Mutex(State())

    init(options: FakeAPNsServer.Options) {
        self.options = options
    }

    func connectionAccepted() {
        state.withLock { $0.connections += 1 }
    }

    /// Apple's answer to `request`, recorded.
    func answer(_ request: Request) -> Response {
        let apnsID = request.headers.first(name: "apns-id") ?? UUID().uuidString.lowercased()
        let headers = Dictionary(request.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        let deviceToken = request.path.hasPrefix("/3/device/") ? String(request.path.dropFirst("/3/device/".count)) : nil

        func refuse(_ status: Int, _ reason: String, timestamp: Date? = nil, retryAfter: Int? = nil) -> Response {
            state.withLock {
                $0.refusals.append(.init(status: status, reason: reason, deviceToken: deviceToken, headers: headers, payload: request.body))
            }
            var body = "{\"reason\":\"\(reason)\""
            if let timestamp { body += ",\"timestamp\":\(Int64((timestamp.timeIntervalSince1970 * 1000).rounded()))" }
            body += "}"
            var responseHeaders = [("apns-id", apnsID), ("content-type", "application/json")]
            if let retryAfter { responseHeaders.append(("retry-after", String(retryAfter))) }
            return Response(status: status, headers: responseHeaders, body: Data(body.utf8))
        }

        guard request.method == .POST else { return refuse(405, "MethodNotAllowed") }
        guard let deviceToken else { return refuse(404, "BadPath") }
        guard !deviceToken.isEmpty else { return refuse(400, "MissingDeviceToken") }
        guard Self.isHex(deviceToken) else { return refuse(400, "BadDeviceToken") }
        for name in ["authorization", "apns-topic", "apns-push-type", "apns-priority", "apns-id", "apns-expiration", "apns-collapse-id"]
        where request.headers[name].count > 1 {
            return refuse(400, "DuplicateHeaders")
        }

        // The provider token.
        guard let authorization = request.headers.first(name: "authorization") else { return refuse(403, "MissingProviderToken") }
        guard authorization.lowercased().hasPrefix("bearer ") else { return refuse(403, "InvalidProviderToken") }
        let jwt = String(authorization.dropFirst("bearer ".count))
        let known = state.withLock { state -> (iat: Date?, expired: Bool) in
            state.providerTokens.insert(jwt)
            return (state.verifiedTokens[jwt], state.expiredTokens.contains(jwt))
        }
        let issuedAt: Date
        if let iat = known.iat {
            issuedAt = iat
        } else {
            guard let iat = verify(jwt) else { return refuse(403, "InvalidProviderToken") }
            state.withLock { _ = $0.verifiedTokens.updateValue(iat, forKey: jwt) }
            issuedAt = iat
        }
        let age = Date().timeIntervalSince(issuedAt)
        guard age > -2 else { return refuse(403, "InvalidProviderToken") }
        guard age < 3_600, !known.expired else { return refuse(403, "ExpiredProviderToken") }

        // The headers.
        guard let topic = request.headers.first(name: "apns-topic") else { return refuse(400, "MissingTopic") }
        guard topic == options.topic else { return refuse(400, "BadTopic") }
        guard let pushType = request.headers.first(name: "apns-push-type"), ["alert", "background"].contains(pushType) else {
            return refuse(400, "InvalidPushType")
        }
        if let priority = request.headers.first(name: "apns-priority"), !["5", "10"].contains(priority) {
            return refuse(400, "BadPriority")
        }
        if let id = request.headers.first(name: "apns-id"), UUID(uuidString: id) == nil { return refuse(400, "BadMessageId") }
        if let expiration = request.headers.first(name: "apns-expiration"), Int64(expiration) == nil {
            return refuse(400, "BadExpirationDate")
        }
        if let collapseID = request.headers.first(name: "apns-collapse-id"), collapseID.utf8.count > 64 {
            return refuse(400, "BadCollapseId")
        }

        // The payload. Apple documents no reason for a body that is not JSON; the fake calls it BadPayload.
        guard !request.body.isEmpty else { return refuse(400, "PayloadEmpty") }
        guard request.body.count <= FakeAPNsServer.maximumPayloadBytes, !request.bodyTruncated else {
            return refuse(413, "PayloadTooLarge")
        }
        guard let json = try? JSONSerialization.jsonObject(with: request.body), let object = json as? [String: Any],
            object["aps"] is [String: Any]
        else { return refuse(400, "BadPayload") }

        // A well-formed push: the script decides.
        let scripted = state.withLock { state -> FakeAPNsServer.Answer in
            if let answer = state.byDeviceToken[deviceToken] { return answer }
            if !state.next.isEmpty { return state.next.removeFirst() }
            return .accept
        }
        switch scripted {
        case .accept:
            state.withLock {
                $0.accepted.append(.init(deviceToken: deviceToken, headers: headers, payload: request.body, apnsID: apnsID))
            }
            return Response(status: 200, headers: [("apns-id", apnsID)], body: Data())
        case .badDeviceToken: return refuse(400, "BadDeviceToken")
        case .unregistered(let since): return refuse(410, "Unregistered", timestamp: since)
        case .tooManyRequests(let retryAfter): return refuse(429, "TooManyRequests", retryAfter: retryAfter)
        case .internalServerError: return refuse(500, "InternalServerError")
        case .expiredProviderToken: return refuse(403, "ExpiredProviderToken")
        case .refuse(let status, let reason): return refuse(status, reason)
        }
    }

    /// The `iat` of a JWT signed ES256 by the configured key, with the configured `kid` and `iss`; `nil` otherwise.
    private func verify(_ jwt: String) -> Date? {
        struct Header: Decodable { let alg: String; let kid: String? }
        struct Claims: Decodable { let iss: String?; let iat: Int64? }
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Self.base64URLDecoded(parts[0]), let claimsData = Self.base64URLDecoded(parts[1]),
            let signatureData = Self.base64URLDecoded(parts[2]),
            let header = try? JSONDecoder().decode(Header.self, from: headerData),
            let claims = try? JSONDecoder().decode(Claims.self, from: claimsData),
            header.alg == "ES256", header.kid == options.keyID, claims.iss == options.teamID, let iat = claims.iat,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            options.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(iat))
    }

    private static func base64URLDecoded(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    private static func isHex(_ text: String) -> Bool {
        text.utf8.count.isMultiple(of: 2)
            && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }
    }
}
