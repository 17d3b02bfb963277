import Foundation
import Testing

@testable import FitBaseSigV4

/// The S3 requests FitBase sends, signed as botocore signs them (`scripts/sigv4/botocore-vectors.py` printed the
/// expected values with botocore 1.43.11 at 2026-11-26T08:30:05Z; paths go to botocore percent-encoded, as boto3's
/// serializers hand them over).
@Suite struct BotocoreS3Tests {
    static let date = Date(timeIntervalSince1970: 1_795_681_805)
    static let credentials = AWSCredentials(
        accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    static let token = "FwoGZXIvYXdzEAQaDEXAMPLE/token+value=="
    static let host = SigV4Request.Header("Host", "127.0.0.1:5055")

    static func signer(region: String = "us-east-1", token: String? = nil) -> SigV4Signer {
        var credentials = credentials
        credentials.sessionToken = token
        return SigV4Signer(credentials: credentials, region: region, service: "s3")
    }

    /// The query of a presigned URL, as name → value, and its signature.
    static func presignedQuery(_ path: String, expires: Int, signer: SigV4Signer) -> [String: String] {
        let request = signer.presigned(
            SigV4Request(method: "GET", path: path, headers: [host]), expires: expires, at: date)
        return Dictionary(request.query.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// botocore's URL's query, decoded.
    static func query(ofURL url: String) throws -> [String: String] {
        let components = try #require(URLComponents(string: url.replacingOccurrences(of: " ", with: "%20")))
        return Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { a, _ in a })
    }

    @Test func presignedGet() throws {
        let expected = try Self.query(
            ofURL: "http://127.0.0.1:5055/fitbase-media/users/4f1c/photo/full.jpg?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T083005Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=5013c6155e5c7a1290c07f54979ef2de3830db555bb9afbbe90e5abf94cc2b9f"
        )
        #expect(Self.presignedQuery("/fitbase-media/users/4f1c/photo/full.jpg", expires: 3600, signer: Self.signer()) == expected)
    }

    @Test func presignedGetOfAKeyWithSpacesAndAccents() throws {
        let expected = try Self.query(
            ofURL: "http://127.0.0.1:5055/fitbase-media/catalog/Flow%20yoga/vid%C3%A9o%201.mp4?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T083005Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=2175b84923ddc41cb09e6b71c456f38854c9435450a0bd0059028927467f2bc7"
        )
        let path = "/fitbase-media/catalog/Flow yoga/vidéo 1.mp4"
        #expect(Self.presignedQuery(path, expires: 900, signer: Self.signer()) == expected)
        let request = SigV4Request(method: "GET", path: path)
        #expect(request.target == "/fitbase-media/catalog/Flow%20yoga/vid%C3%A9o%201.mp4")
    }

    @Test func presignedGetWithASessionToken() throws {
        let expected = try Self.query(
            ofURL: "http://127.0.0.1:5055/fitbase-media/a.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20261126%2Feu-central-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T083005Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Security-Token=FwoGZXIvYXdzEAQaDEXAMPLE%2Ftoken%2Bvalue%3D%3D&X-Amz-Signature=abc7c6239bbb87ae0c3a50fdfba110445ac219c2fe98d7aa2348a35cb097d8d9"
        )
        let signer = Self.signer(region: "eu-central-1", token: Self.token)
        #expect(Self.presignedQuery("/fitbase-media/a.bin", expires: 60, signer: signer) == expected)
    }

    @Test func putWithAHashedBody() {
        let request = SigV4Request(
            method: "PUT", path: "/fitbase-media/users/4f1c/photo/thumb.jpg",
            headers: [Self.host, .init("Content-Type", "image/jpeg")])
        let signed = Self.signer(region: "eu-central-1").signed(
            request, payload: .bytes(Array("hello, S3".utf8)), at: Self.date, sendsPayloadHash: true)
        #expect(signed.header("x-amz-content-sha256") == "195d68c5429e70c8f86511ec057714fdb3c8ca5396126d5158ef98c6253a34c4")
        #expect(
            signed.header("Authorization")
                == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261126/eu-central-1/s3/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date, Signature=e52e8dbf80a3515499f8aa5128cb70001e32ac7a8ad0ed5f2a073f10a3b5a100"
        )
    }

    @Test func unsignedPayloadPartUpload() {
        let request = SigV4Request(
            method: "PUT", path: "/fitbase-media/big.bin",
            query: [.init("partNumber", "2"), .init("uploadId", "abc/def")], headers: [Self.host])
        let signed = Self.signer(region: "eu-central-1").signed(
            request, payload: .unsigned, at: Self.date, sendsPayloadHash: true)
        #expect(signed.header("X-Amz-Content-Sha256") == "UNSIGNED-PAYLOAD")
        #expect(
            signed.header("Authorization")
                == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261126/eu-central-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=cf3be7fc6a82686fc5b05bf1d2035de9e5cf4090781296ccfc5f15fe949af4ec"
        )
        #expect(signed.target == "/fitbase-media/big.bin?partNumber=2&uploadId=abc%2Fdef")
    }

    @Test func listWithASessionToken() {
        let request = SigV4Request(
            method: "GET", path: "/fitbase-media",
            query: [.init("list-type", "2"), .init("prefix", "users/4f1c/")], headers: [Self.host])
        let signed = Self.signer(region: "eu-central-1", token: Self.token).signed(
            request, payload: .empty, at: Self.date, sendsPayloadHash: true)
        #expect(signed.header("X-Amz-Security-Token") == Self.token)
        #expect(
            signed.header("Authorization")
                == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261126/eu-central-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=50ef7982577e49acaa227d959495379091e8c826569c79d246e759ea0b228312"
        )
    }
}
