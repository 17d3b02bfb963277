import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a request's body contributes to its signature.
public enum SigV4Payload: Sendable, Equatable {
    /// The body's bytes, hashed here (small bodies: the whole body is in memory anyway).
    case bytes([UInt8])
    /// The SHA-256 of the body in lower-case hex, computed by the caller while it read the body.
    case sha256Hex(String)
    /// `UNSIGNED-PAYLOAD`: the body is not covered (S3 over TLS, and presigned URLs).
    case unsigned

    /// The empty body.
    public static let empty = SigV4Payload.bytes([])

    /// The value that goes in the canonical request and in `X-Amz-Content-Sha256`.
    public var hash: String {
        switch self {
        case .bytes(let bytes): SigV4Signer.hexSHA256(bytes)
        case .sha256Hex(let hex): hex
        case .unsigned: "UNSIGNED-PAYLOAD"
        }
    }
}

/// AWS Signature Version 4 for one region and service: the canonical request, the string to sign, the signing key,
/// and from them an `Authorization` header or a presigned URL.
///
/// <https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html>
public struct SigV4Signer: Sendable {
    /// The algorithm name in headers, query and the string to sign.
    public static let algorithm = "AWS4-HMAC-SHA256"

    /// The credentials requests are signed with.
    public var credentials: AWSCredentials
    /// The region (`us-east-1`).
    public var region: String
    /// The service (`s3`).
    public var service: String
    /// Whether the path's `.`, `..` and empty segments are resolved before signing: every service but S3 does,
    /// S3 signs the key as it is.
    public var normalizesPath: Bool

    /// A signer for `service` in `region`; S3 does not normalise paths, so the default follows the service.
    public init(credentials: AWSCredentials, region: String, service: String, normalizesPath: Bool? = nil) {
        self.credentials = credentials
        self.region = region
        self.service = service
        self.normalizesPath = normalizesPath ?? (service != "s3")
    }

    // MARK: Signing

    /// `request` with `X-Amz-Date`, `X-Amz-Security-Token` (for temporary credentials), `X-Amz-Content-Sha256`
    /// (when `sendsPayloadHash`, as S3 requires) and `Authorization` added.
    public func signed(
        _ request: SigV4Request, payload: SigV4Payload, at date: Date, sendsPayloadHash: Bool = false
    ) -> SigV4Request {
        let timestamp = SigV4Timestamp(date)
        var request = request
        request.headers.removeAll { ["authorization", "x-amz-date"].contains($0.name.lowercased()) }
        request.headers.append(.init("X-Amz-Date", timestamp.amzDate))
        if let token = credentials.sessionToken {
            request.headers.append(.init("X-Amz-Security-Token", token))
        }
        if sendsPayloadHash {
            request.headers.append(.init("X-Amz-Content-Sha256", payload.hash))
        }
        let canonical = canonicalRequest(request, payloadHash: payload.hash)
        let signature = signature(of: stringToSign(canonicalRequest: canonical.text, at: timestamp), at: timestamp)
        request.headers.append(
            .init(
                "Authorization",
                "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(scope(timestamp)), "
                    + "SignedHeaders=\(canonical.signedHeaders), Signature=\(signature)"
            )
        )
        return request
    }

    /// `request` with the query parameters of a presigned URL that is valid for `expires` seconds from `date`
    /// (1 s to 7 days, as AWS allows); every header of `request` is signed, so the caller must send them as they are.
    public func presigned(
        _ request: SigV4Request, expires: Int, at date: Date, payload: SigV4Payload = .unsigned
    ) -> SigV4Request {
        let timestamp = SigV4Timestamp(date)
        var request = request
        let signedHeaders = Self.canonicalHeaders(request.headers).signedHeaders
        request.query.append(contentsOf: [
            .init("X-Amz-Algorithm", Self.algorithm),
            .init("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope(timestamp))"),
            .init("X-Amz-Date", timestamp.amzDate),
            .init("X-Amz-Expires", String(min(max(expires, 1), 604_800))),
            .init("X-Amz-SignedHeaders", signedHeaders),
        ])
        if let token = credentials.sessionToken {
            request.query.append(.init("X-Amz-Security-Token", token))
        }
        let canonical = canonicalRequest(request, payloadHash: payload.hash)
        let signature = signature(of: stringToSign(canonicalRequest: canonical.text, at: timestamp), at: timestamp)
        request.query.append(.init("X-Amz-Signature", signature))
        return request
    }

    // MARK: The steps, each testable against AWS's published intermediate results

    /// The canonical request (method, path, query, headers, signed header names, payload hash on their own lines)
    /// and its list of signed header names.
    public func canonicalRequest(_ request: SigV4Request, payloadHash: String) -> (text: String, signedHeaders: String) {
        let path = normalizesPath ? SigV4Encoding.normalize(request.path) : request.path
        let headers = Self.canonicalHeaders(request.headers)
        let text = [
            request.method,
            SigV4Encoding.encodePath(path),
            SigV4Encoding.canonicalQuery(request.query),
            headers.text,
            headers.signedHeaders,
            payloadHash,
        ].joined(separator: "\n")
        return (text, headers.signedHeaders)
    }

    /// The string to sign: algorithm, timestamp, credential scope and the canonical request's SHA-256.
    public func stringToSign(canonicalRequest: String, at timestamp: SigV4Timestamp) -> String {
        [Self.algorithm, timestamp.amzDate, scope(timestamp), Self.hexSHA256(Array(canonicalRequest.utf8))]
            .joined(separator: "\n")
    }

    /// The key of the day, region and service: HMAC chain from `AWS4` + secret through date, region, service and
    /// `aws4_request`.
    public func signingKey(at timestamp: SigV4Timestamp) -> SymmetricKey {
        var key = SymmetricKey(data: Array(("AWS4" + credentials.secretAccessKey).utf8))
        for part in [timestamp.dateStamp, region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return key
    }

    /// The signature of `stringToSign`, lower-case hex.
    public func signature(of stringToSign: String, at timestamp: SigV4Timestamp) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: signingKey(at: timestamp))
        return Self.hex(Array(mac))
    }

    /// The credential scope: `date/region/service/aws4_request`.
    public func scope(_ timestamp: SigV4Timestamp) -> String {
        "\(timestamp.dateStamp)/\(region)/\(service)/aws4_request"
    }

    // MARK: Helpers

    /// Lower-cased names sorted, values trimmed with inner runs of spaces folded, repeated names joined by commas.
    static func canonicalHeaders(_ headers: [SigV4Request.Header]) -> (text: String, signedHeaders: String) {
        var values: [String: [String]] = [:]
        for header in headers {
            values[header.name.lowercased(), default: []].append(foldSpaces(header.value))
        }
        let names = values.keys.sorted()
        let text = names.map { "\($0):\(values[$0, default: []].joined(separator: ","))\n" }.joined()
        return (text, names.joined(separator: ";"))
    }

    /// The value with leading and trailing whitespace removed and each inner run of whitespace (line folds
    /// included) replaced by one space.
    static func foldSpaces(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).joined(separator: " ")
    }

    /// The SHA-256 of `bytes` in lower-case hex.
    public static func hexSHA256(_ bytes: some Sequence<UInt8>) -> String {
        var hasher = SHA256()
        hasher.update(data: Array(bytes))
        return hex(Array(hasher.finalize()))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
