import AsyncHTTPClient
import FitBaseSigV4
import Foundation
import NIOCore
import NIOHTTP1

/// Media in an S3-compatible bucket, over AsyncHTTPClient with requests signed by ``SigV4Signer``.
///
/// A body up to `partSize` is one `PutObject`; a larger one is a multipart upload of `partSize` parts (S3's minimum is
/// 5 MiB), so at most one part is in memory; a failed multipart upload is aborted so no parts stay billed. Reads ask
/// for the size with `HEAD`, then stream the bytes (or a range of them) with `GET`.
struct S3MediaStorage: MediaStorage {
    let location: S3Location
    let client: HTTPClient
    let signer: SigV4Signer
    /// Bytes per multipart part, and the largest body sent as one `PutObject`.
    let partSize: Int

    var kind: String { "s3" }

    init(location: S3Location, credentials: AWSCredentials, client: HTTPClient, partSize: Int = 8 << 20) {
        self.location = location
        self.client = client
        self.signer = SigV4Signer(credentials: credentials, region: location.region, service: "s3")
        self.partSize = max(partSize, 5 << 20)
    }

    // MARK: MediaStorage

    func put<Body: AsyncSequence & Sendable>(
        _ key: MediaKey, contentType: String, body: Body
    ) async throws -> StoredMedia where Body.Element == ByteBuffer {
        var pending = ByteBuffer()
        var iterator = body.makeAsyncIterator()
        // The first part decides: a body that ends within it is one PutObject.
        while pending.readableBytes <= partSize, var chunk = try await iterator.next() {
            pending.writeBuffer(&chunk)
        }
        guard pending.readableBytes > partSize else {
            let size = Int64(pending.readableBytes)
            _ = try await send(
                "PUT", key: key, headers: [("Content-Type", contentType)], body: pending, expecting: [200])
            return StoredMedia(key: key, size: size)
        }

        let created = try await send("POST", key: key, query: [.init("uploads", "")], headers: [("Content-Type", contentType)], expecting: [200])
        guard let uploadID = S3XML.values(of: "UploadId", in: created.body).first, !uploadID.isEmpty else {
            throw MediaStorageError.storeFailed("CreateMultipartUpload answered no UploadId")
        }
        do {
            var etags: [String] = []
            var size: Int64 = 0
            var finished = false
            while !finished {
                while pending.readableBytes < partSize {
                    guard var chunk = try await iterator.next() else {
                        finished = true
                        break
                    }
                    pending.writeBuffer(&chunk)
                }
                // Whole parts go now; the rest waits for more bytes, or is the last part.
                while pending.readableBytes >= partSize || (finished && pending.readableBytes > 0) {
                    let part = pending.readSlice(length: min(partSize, pending.readableBytes)) ?? ByteBuffer()
                    size += Int64(part.readableBytes)
                    let answer = try await send(
                        "PUT", key: key,
                        query: [.init("partNumber", String(etags.count + 1)), .init("uploadId", uploadID)],
                        body: part, expecting: [200])
                    guard let etag = answer.headers.first(name: "etag") else {
                        throw MediaStorageError.storeFailed("UploadPart answered no ETag")
                    }
                    etags.append(etag)
                }
                pending.discardReadBytes()
            }
            let parts = etags.enumerated().map { index, etag in
                "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(S3XML.escape(etag))</ETag></Part>"
            }
            let document = "<CompleteMultipartUpload>\(parts.joined())</CompleteMultipartUpload>"
            let completed = try await send(
                "POST", key: key, query: [.init("uploadId", uploadID)], headers: [("Content-Type", "application/xml")],
                body: ByteBuffer(string: document), expecting: [200])
            // S3 may answer 200 and put the error in the body.
            if let code = S3XML.values(of: "Code", in: completed.body).first {
                throw MediaStorageError.storeFailed("CompleteMultipartUpload failed: \(code)")
            }
            return StoredMedia(key: key, size: size)
        } catch {
            _ = try? await send("DELETE", key: key, query: [.init("uploadId", uploadID)], expecting: [204, 200, 404])
            throw error
        }
    }

    func get(_ key: MediaKey, range: MediaByteRange?) async throws -> MediaContent? {
        let head = try await send("HEAD", key: key, expecting: [200, 404])
        guard head.status == .ok else { return nil }
        guard let size = head.headers.first(name: "content-length").flatMap(Int64.init), size >= 0 else {
            throw MediaStorageError.storeFailed("HEAD answered no Content-Length, or a negative one")
        }
        let contentType = head.headers.first(name: "content-type") ?? key.contentType
        let bytes: ClosedRange<Int64>?
        if let range {
            guard let resolved = range.resolved(size: size) else { throw MediaStorageError.rangeNotSatisfiable(size: size) }
            bytes = resolved
        } else {
            bytes = size > 0 ? 0...(size - 1) : nil
        }
        let request = signedRequest(
            "GET", key: key, headers: bytes.map { [("Range", "bytes=\($0.lowerBound)-\($0.upperBound)")] } ?? [],
            payload: .empty)
        let client = client
        return MediaContent(size: size, range: bytes, contentType: contentType) { consume in
            guard bytes != nil else { return }
            let response = try await client.execute(request, timeout: .seconds(60))
            guard response.status == .ok || response.status == .partialContent else {
                throw MediaStorageError.storeFailed("GET \(key) answered \(response.status.code)")
            }
            for try await chunk in response.body {
                try await consume(chunk)
            }
        }
    }

    func delete(_ key: MediaKey) async throws {
        _ = try await send("DELETE", key: key, expecting: [204, 200, 404])
    }

    func list(prefix: String) async throws -> [StoredMedia] {
        var found: [StoredMedia] = []
        var continuation: String?
        repeat {
            var query: [SigV4Request.QueryItem] = [.init("list-type", "2"), .init("prefix", prefix)]
            if let continuation { query.append(.init("continuation-token", continuation)) }
            let answer = try await send("GET", key: nil, query: query, expecting: [200])
            let page = S3XML.listPage(answer.body)
            for object in page.objects {
                guard let key = MediaKey(object.key) else { continue }
                found.append(StoredMedia(key: key, size: object.size))
            }
            continuation = page.next
        } while continuation != nil
        return found.sorted { $0.key < $1.key }
    }

    func presignedURL(for key: MediaKey, expires: Duration, now: Date) -> String? {
        let request = SigV4Request(method: "GET", path: location.path(of: key), headers: [.init("Host", location.host)])
        let seconds = Int(expires.components.seconds)
        return location.endpoint + signer.presigned(request, expires: seconds, at: now).target
    }

    /// Creates the bucket (tests, and `fitbase` on a fresh MinIO); an existing bucket of ours is fine.
    func createBucket() async throws {
        let configuration =
            location.region == "us-east-1"
            ? nil
            : ByteBuffer(string: "<CreateBucketConfiguration><LocationConstraint>\(location.region)</LocationConstraint></CreateBucketConfiguration>")
        _ = try await send("PUT", key: nil, body: configuration, expecting: [200, 409])
    }

    // MARK: Requests

    private struct Answer {
        let status: HTTPResponseStatus
        let headers: HTTPHeaders
        let body: String
    }

    /// One signed request whose answer is small (everything but object reads); a status outside `expecting` throws
    /// with S3's error code.
    private func send(
        _ method: String, key: MediaKey?, query: [SigV4Request.QueryItem] = [], headers: [(String, String)] = [],
        body: ByteBuffer? = nil, expecting: Set<UInt>
    ) async throws -> Answer {
        let payload: SigV4Payload = body.map { .bytes(Array($0.readableBytesView)) } ?? .empty
        var request = signedRequest(method, key: key, query: query, headers: headers, payload: payload)
        if let body { request.body = .bytes(body) }
        let response = try await client.execute(request, timeout: .seconds(120))
        let text = method == "HEAD" ? "" : String(buffer: try await response.body.collect(upTo: 1 << 20))
        guard expecting.contains(response.status.code) else {
            let code = S3XML.values(of: "Code", in: text).first ?? "no error code"
            throw MediaStorageError.storeFailed("\(method) \(key?.path ?? location.bucket) answered \(response.status.code) \(code)")
        }
        return Answer(status: response.status, headers: response.headers, body: text)
    }

    private func signedRequest(
        _ method: String, key: MediaKey?, query: [SigV4Request.QueryItem] = [], headers: [(String, String)] = [],
        payload: SigV4Payload
    ) -> HTTPClientRequest {
        let unsigned = SigV4Request(
            method: method, path: location.path(of: key), query: query,
            headers: [.init("Host", location.host)] + headers.map { .init($0.0, $0.1) })
        let signed = signer.signed(unsigned, payload: payload, at: Date(), sendsPayloadHash: true)
        var request = HTTPClientRequest(url: location.endpoint + signed.target)
        request.method = .init(rawValue: method)
        for header in signed.headers {
            request.headers.add(name: header.name, value: header.value)
        }
        return request
    }
}
