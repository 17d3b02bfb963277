import AsyncHTTPClient
import Crypto
import FitBaseSigV4
import Foundation
import NIOCore
import NIOHTTP1

/// Small objects in an S3-compatible bucket, whole: put, get, list by prefix. Requests are signed with
/// ``SigV4Signer``; keys are plain text (the signer encodes them). For what is not media (audit checkpoints); media
/// has its streaming store.
struct S3ObjectClient: Sendable {
    let location: S3Location
    let client: HTTPClient
    let signer: SigV4Signer

    init(location: S3Location, credentials: AWSCredentials, client: HTTPClient) {
        self.location = location
        self.client = client
        self.signer = SigV4Signer(credentials: credentials, region: location.region, service: "s3")
    }

    /// An answer of S3, its body read whole (answers here are small).
    struct Answer: Sendable {
        let status: HTTPResponseStatus
        let headers: HTTPHeaders
        let body: Data
    }

    /// Stores `body` as `key` unless the key exists (`If-None-Match: *`: S3 answers 412 and nothing is replaced),
    /// with `headers` added (object-lock retention, content type). `Content-MD5` is sent: S3 requires it with retention.
    func create(_ key: String, body: Data, headers: [(String, String)]) async throws {
        let md5 = Data(Insecure.MD5.hash(data: body)).base64EncodedString()
        _ = try await send(
            "PUT", key: key, headers: [("Content-MD5", md5), ("If-None-Match", "*")] + headers, body: body, expecting: [200])
    }

    /// The bytes of `key`, nil when there is no such object.
    func get(_ key: String) async throws -> Data? {
        let answer = try await send("GET", key: key, expecting: [200, 404])
        return answer.status == .ok ? answer.body : nil
    }

    /// Every key under `prefix`, sorted.
    func list(prefix: String) async throws -> [String] {
        var keys: [String] = []
        var continuation: String?
        repeat {
            var query: [SigV4Request.QueryItem] = [.init("list-type", "2"), .init("prefix", prefix)]
            if let continuation { query.append(.init("continuation-token", continuation)) }
            let text = String(decoding: try await send("GET", key: nil, query: query, expecting: [200]).body, as: UTF8.self)
            let page = S3XML.listPage(text)
            keys.append(contentsOf: page.objects.map(\.key))
            continuation = page.next
        } while continuation != nil
        return keys.sorted()
    }

    /// One signed request (`key` nil: the bucket itself); a status outside `expecting` throws with S3's error code.
    func send(
        _ method: String, key: String?, query: [SigV4Request.QueryItem] = [], headers: [(String, String)] = [],
        body: Data? = nil, expecting: Set<UInt>
    ) async throws -> Answer {
        let bucket = location.pathStyle ? "/\(location.bucket)" : ""
        let path = bucket + (key.map { "/" + $0 } ?? (location.pathStyle ? "" : "/"))
        let unsigned = SigV4Request(
            method: method, path: path, query: query,
            headers: [.init("Host", location.host)] + headers.map { .init($0.0, $0.1) })
        let payload = body.map { SigV4Payload.bytes(Array($0)) } ?? .empty
        let signed = signer.signed(unsigned, payload: payload, at: Date(), sendsPayloadHash: true)
        var request = HTTPClientRequest(url: location.endpoint + signed.target)
        request.method = .init(rawValue: method)
        for header in signed.headers {
            request.headers.add(name: header.name, value: header.value)
        }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let bytes = method == "HEAD" ? ByteBuffer() : try await response.body.collect(upTo: 16 << 20)
        let answer = Answer(status: response.status, headers: response.headers, body: Data(bytes.readableBytesView))
        guard expecting.contains(response.status.code) else {
            let code = S3XML.values(of: "Code", in: String(decoding: answer.body, as: UTF8.self)).first ?? "no error code"
            throw S3ObjectError(
                description: "\(method) \(key ?? location.bucket) in \(location.description) answered \(response.status.code) \(code)")
        }
        return answer
    }
}

/// A request to an S3 bucket that did not answer as expected.
struct S3ObjectError: Error, CustomStringConvertible {
    let description: String
}
