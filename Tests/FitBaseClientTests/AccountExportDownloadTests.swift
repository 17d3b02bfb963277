import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization
import Testing

@testable import FitBaseServer

/// The GDPR export is saved to a file as it streams: the bytes the server sent, never collected whole on the phone.
@Suite struct AccountExportDownloadTests {
    /// A transport over the real one that keeps a copy of the export's body as it passes (collected here, by the test,
    /// to compare with the file).
    final class ExportCopy: ClientTransport, Sendable {
        private let base = FitBaseClient.defaultTransport()
        private let copy = Mutex(Data())
        var bytes: Data { copy.withLock { $0 } }

        func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
            let (response, answer) = try await base.send(request, body: body, baseURL: baseURL, operationID: operationID)
            guard operationID == "exportMe", response.status == .ok, let answer else { return (response, answer) }
            let data = try await Data(collecting: answer, upTo: 64 << 20)
            copy.withLock { $0 = data }
            return (response, HTTPBody(data))
        }
    }

    @Test func theFileIsTheServersExport() async throws {
        try await withLiveApp(.sqlite) { server, _ in
            let network = ExportCopy()
            let client = FitBaseClient(serverURL: server, transport: network)
            let user = try await client.signUp(email: "export-\(UUID().uuidString.prefix(8))@example.com", password: "correct horse battery")
            _ = try await client.call { try await client.api.recordConsent(body: .json(.init(kind: .healthData, version: "1", granted: true))).created }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("export.json")

            let written = try await client.exportAccount(to: file)
            let saved = try Data(contentsOf: file)
            #expect(saved == network.bytes && Int64(saved.count) == written && written > 0)
            let export = try JSONDecoder.withInternetDates.decode(Components.Schemas.AccountExport.self, from: saved)
            #expect(export.userId == user.id.description)
            #expect(!FileManager.default.fileExists(atPath: file.path + ".partial"))
            let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)

            // Signed out, the server refuses: the refusal is the one mapping's, and no file is left behind.
            try await client.signOut()
            let refused = directory.appendingPathComponent("refused.json")
            let refusal = await #expect(throws: FitBaseError.self) { try await client.exportAccount(to: refused) }
            #expect(refusal?.statusCode == 401)
            #expect(!FileManager.default.fileExists(atPath: refused.path) && !FileManager.default.fileExists(atPath: refused.path + ".partial"))
        }
    }

    /// An export's body in chunks, each handed over only when asked for: before each chunk after the first, it notes how
    /// much of the body the file at `partial` holds. A reader that collected the body before writing would find
    /// nothing written yet; one that writes as it goes finds every earlier chunk there.
    final class ChunkedExport: ClientTransport, Sendable {
        static let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 16 << 10)
        let chunks: Int
        let partial: URL
        let failsAfter: Int?
        private let seen = Mutex([Int]())
        /// The file's size before each chunk after the first was handed over.
        var sizesSeen: [Int] { seen.withLock { $0 } }

        init(chunks: Int, partial: URL, failsAfter: Int? = nil) {
            self.chunks = chunks
            self.partial = partial
            self.failsAfter = failsAfter
        }

        struct Dropped: Error {}

        /// How many chunks were asked for.
        final class Counter: Sendable {
            private let count = Mutex(0)
            /// The number of this request, from 0.
            func take() -> Int {
                count.withLock { value in
                    defer { value += 1 }
                    return value
                }
            }
        }

        func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
            #expect(operationID == "exportMe" && request.headerFields[.authorization] == "Bearer access")
            let handedOver = Counter()
            let stream = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { [self] in
                let next = handedOver.take()
                guard next < chunks else { return nil }
                if let failsAfter, next == failsAfter { throw Dropped() }
                if next > 0 {
                    let size = (try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int) ?? 0
                    seen.withLock { $0.append(size) }
                }
                return ArraySlice(Self.chunk)
            }
            let response = HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"])
            return (response, HTTPBody(stream, length: .unknown, iterationBehavior: .single))
        }
    }

    static func signedInClient(over transport: any ClientTransport) -> FitBaseClient {
        let session = StoredSession(
            userID: UserID(), accessToken: "access", refreshToken: "refresh", accessTokenExpiresAt: .now.addingTimeInterval(3_600))
        return FitBaseClient(serverURL: URL(string: "http://127.0.0.1:9")!, tokenStore: InMemoryTokenStore(session), transport: transport)
    }

    @Test func eachChunkIsInTheFileBeforeTheNextArrives() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let network = ChunkedExport(chunks: 64, partial: file.appendingPathExtension("partial"))
        let written = try await Self.signedInClient(over: network).exportAccount(to: file)
        let size = ChunkedExport.chunk.count
        #expect(written == Int64(64 * size))
        #expect(network.sizesSeen == (1..<64).map { $0 * size })
        #expect(try Data(contentsOf: file).count == 64 * size)
    }

    @Test func aBrokenDownloadLeavesNoFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).json")
        try Data("an earlier export".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let network = ChunkedExport(chunks: 8, partial: file.appendingPathExtension("partial"), failsAfter: 5)
        let failure = await #expect(throws: FitBaseError.self) { try await Self.signedInClient(over: network).exportAccount(to: file) }
        guard case .transport = failure else { Issue.record("a dropped download is the transport's failure: \(String(describing: failure))"); return }
        // The earlier export stays whole; the partial one is gone.
        #expect(try String(contentsOf: file, encoding: .utf8) == "an earlier export")
        #expect(!FileManager.default.fileExists(atPath: file.path + ".partial"))
    }
}
