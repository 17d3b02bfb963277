import AsyncHTTPClient
import FitBaseSigV4
import Foundation

@testable import FitBaseServer

/// The media stores a media test runs on: the data directory always, an S3-compatible server when
/// `FITBASE_TEST_S3_URL` names one (`.ci/run` starts moto and sets it), e.g.
/// `s3://fitbase-test?region=us-east-1&endpoint=http://127.0.0.1:5055`. Each test gets a bucket of its own, named
/// after the URL's with a random suffix; credentials come from `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY` when set
/// (moto takes any).
enum MediaBackend: String, CustomStringConvertible, Sendable, CaseIterable {
    case local
    case s3

    static let s3URL = ProcessInfo.processInfo.environment["FITBASE_TEST_S3_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let s3Skipped = "FITBASE_TEST_S3_URL is unset: the S3 back end is not tested (start `moto_server -p 5055` and set FITBASE_TEST_S3_URL=s3://fitbase-test?region=us-east-1&endpoint=http://127.0.0.1:5055)"

    /// Every back end this run can test.
    static var all: [MediaBackend] { s3URL == nil ? [.local] : [.local, .s3] }

    var description: String { rawValue }

    /// A fresh S3 location (its bucket created) and credentials for one test.
    static func freshS3Bucket(client: HTTPClient) async throws -> (S3Location, AWSCredentials) {
        guard let url = s3URL, var components = URLComponents(string: url), let base = components.host else {
            throw MediaTestSetupError(reason: s3Skipped)
        }
        components.host = String(base.prefix(40)) + "-" + UUID().uuidString.prefix(8).lowercased()
        guard let text = components.string, let location = S3Location(parsing: text) else {
            throw MediaTestSetupError(reason: "FITBASE_TEST_S3_URL is not an s3:// URL FitBase reads: \(url)")
        }
        let credentials =
            AWSCredentials(environment: ProcessInfo.processInfo.environment)
            ?? AWSCredentials(accessKeyID: "fitbase-test", secretAccessKey: "fitbase-test-secret")
        try await S3MediaStorage(location: location, credentials: credentials, client: client).createBucket()
        return (location, credentials)
    }

    /// The store configuration for one test (an S3 bucket of its own).
    func configuration(client: HTTPClient) async throws -> MediaConfiguration.Store {
        switch self {
        case .local: return .local(directory: nil)
        case .s3:
            let (location, credentials) = try await Self.freshS3Bucket(client: client)
            return .s3(location, credentials)
        }
    }
}

struct MediaTestSetupError: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
