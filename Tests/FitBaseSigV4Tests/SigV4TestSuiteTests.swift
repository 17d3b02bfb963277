import Foundation
import Testing

@testable import FitBaseSigV4

/// Every case of AWS's SigV4 test suite (copied into `aws-sig-v4-test-suite/`, see its README): the canonical request,
/// the string to sign and the signature, for header signing and for presigned (query) signing.
@Suite struct SigV4TestSuiteTests {
    static let suiteFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("aws-sig-v4-test-suite")

    static let cases: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: suiteFolder.path)) ?? []
        return names.filter { !$0.hasSuffix(".md") }.sorted()
    }()

    @Test func theSuiteIsThere() {
        #expect(Self.cases.count == 37)
    }

    @Test(arguments: cases) func headerSigning(_ name: String) throws {
        let vector = try TestVector(folder: Self.suiteFolder.appendingPathComponent(name))
        let signed = vector.signer.signed(
            vector.request, payload: .bytes(vector.body), at: vector.date, sendsPayloadHash: vector.signsBody)

        var unsigned = signed
        unsigned.headers.removeAll { $0.name == "Authorization" }
        let canonical = vector.signer.canonicalRequest(unsigned, payloadHash: SigV4Payload.bytes(vector.body).hash)
        #expect(canonical.text == (try vector.file("header-canonical-request.txt")))
        let stringToSign = vector.signer.stringToSign(canonicalRequest: canonical.text, at: SigV4Timestamp(vector.date))
        #expect(stringToSign == (try vector.file("header-string-to-sign.txt")))
        let signature = try vector.file("header-signature.txt")
        #expect(
            signed.header("Authorization")
                == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
                + "SignedHeaders=\(canonical.signedHeaders), Signature=\(signature)"
        )
    }

    @Test(arguments: cases) func querySigning(_ name: String) throws {
        let vector = try TestVector(folder: Self.suiteFolder.appendingPathComponent(name))
        let presigned = vector.signer.presigned(
            vector.request, expires: vector.expires, at: vector.date, payload: .bytes(vector.body))

        var unsigned = presigned
        unsigned.query.removeAll { $0.name == "X-Amz-Signature" }
        let canonical = vector.signer.canonicalRequest(unsigned, payloadHash: SigV4Payload.bytes(vector.body).hash)
        #expect(canonical.text == (try vector.file("query-canonical-request.txt")))
        let stringToSign = vector.signer.stringToSign(canonicalRequest: canonical.text, at: SigV4Timestamp(vector.date))
        #expect(stringToSign == (try vector.file("query-string-to-sign.txt")))
        #expect(presigned.query.last == .init("X-Amz-Signature", try vector.file("query-signature.txt")))
    }

    @Test func aChangedByteChangesTheSignature() throws {
        let vector = try TestVector(folder: Self.suiteFolder.appendingPathComponent("get-vanilla"))
        var request = vector.request
        request.path = "/a"
        let signed = vector.signer.signed(request, payload: .empty, at: vector.date)
        #expect(!(signed.header("Authorization") ?? "").hasSuffix(try vector.file("header-signature.txt")))
    }

    @Test func timestamps() {
        #expect(SigV4Timestamp(Date(timeIntervalSince1970: 1_440_938_160)).amzDate == "20150830T123600Z")
        #expect(SigV4Timestamp(Date(timeIntervalSince1970: 0)).amzDate == "19700101T000000Z")
        #expect(SigV4Timestamp(Date(timeIntervalSince1970: 951_825_599.9)).amzDate == "20000229T115959Z")
        #expect(SigV4Timestamp(Date(timeIntervalSince1970: 4_102_444_800)).dateStamp == "21000101")
    }
}

/// One folder of the suite: `context.json`, `request.txt` and the expected results.
private struct TestVector {
    struct Context: Decodable {
        struct Credentials: Decodable {
            var access_key_id: String
            var secret_access_key: String
            var token: String?
        }
        var credentials: Credentials
        var expiration_in_seconds: Int
        var normalize: Bool
        var region: String
        var service: String
        var sign_body: Bool
        var timestamp: String
    }

    let folder: URL
    let signer: SigV4Signer
    let request: SigV4Request
    let body: [UInt8]
    let date: Date
    let expires: Int
    let signsBody: Bool

    init(folder: URL) throws {
        self.folder = folder
        let context = try JSONDecoder().decode(
            Context.self, from: Data(contentsOf: folder.appendingPathComponent("context.json")))
        signer = SigV4Signer(
            credentials: AWSCredentials(
                accessKeyID: context.credentials.access_key_id,
                secretAccessKey: context.credentials.secret_access_key,
                sessionToken: context.credentials.token
            ),
            region: context.region, service: context.service, normalizesPath: context.normalize
        )
        date = try #require(ISO8601DateFormatter().date(from: context.timestamp))
        expires = context.expiration_in_seconds
        signsBody = context.sign_body
        (request, body) = try Self.parse(Data(contentsOf: folder.appendingPathComponent("request.txt")))
    }

    func file(_ name: String) throws -> String {
        try String(decoding: Data(contentsOf: folder.appendingPathComponent(name)), as: UTF8.self)
    }

    /// `METHOD target HTTP/1.1`, header lines (a line starting with a space continues the previous one), an empty
    /// line, the body. The target's path and query are decoded here; the signer encodes them again.
    static func parse(_ data: Data) throws -> (SigV4Request, [UInt8]) {
        let text = String(decoding: data, as: UTF8.self)
        let (head, body): (Substring, Substring) =
            if let blank = text.range(of: "\n\n") {
                (text[..<blank.lowerBound], text[blank.upperBound...])
            } else {
                (Substring(text), "")
            }
        var lines = head.split(separator: "\n", omittingEmptySubsequences: false)
        let requestLine = lines.removeFirst()
        let method = requestLine.prefix { $0 != " " }
        let target = requestLine.dropFirst(method.count + 1).dropLast(" HTTP/1.1".count)
        let (rawPath, rawQuery) =
            if let mark = target.firstIndex(of: "?") {
                (target[..<mark], target[target.index(after: mark)...])
            } else {
                (target, Substring(""))
            }
        let query: [SigV4Request.QueryItem] = rawQuery.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return .init(decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
        var headers: [SigV4Request.Header] = []
        for line in lines where !line.isEmpty {
            if line.first == " ", !headers.isEmpty {
                headers[headers.count - 1].value += "\n" + line
            } else {
                let colon = try #require(line.firstIndex(of: ":"))
                headers.append(.init(String(line[..<colon]), String(line[line.index(after: colon)...])))
            }
        }
        return (
            SigV4Request(method: String(method), path: decode(rawPath), query: query, headers: headers),
            Array(body.utf8)
        )
    }

    static func decode(_ text: Substring) -> String {
        String(text).removingPercentEncoding ?? String(text)
    }
}
