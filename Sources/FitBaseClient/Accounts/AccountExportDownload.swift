import FitBaseAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime

extension FitBaseClient {
    /// Saves everything the server keeps about the signed-in user (``exportMe``, the GDPR export) as one JSON file at
    /// `fileURL`, written chunk by chunk as it arrives: the phone's memory does not grow with the account's size,
    /// as the server's does not. The file (owner-only) replaces any at `fileURL` once complete; until then the bytes go
    /// to `<fileURL>.partial`, removed when the download fails. Returns the number of bytes written.
    ///
    /// The request is the generated operation's, with the session's token and the one mapping of refusals to errors;
    /// only its `200` body is diverted to the file instead of being decoded.
    @discardableResult
    public func exportAccount(to fileURL: URL) async throws(FitBaseError) -> Int64 {
        let diverted = Client(
            serverURL: serverURL, configuration: Configuration(dateTranscoder: InternetDateTimeTranscoder()), transport: transport,
            middlewares: [ProblemAnswers(), AuthenticationMiddleware(session: session), BodyToFile(destination: fileURL)]
        )
        do {
            _ = try await diverted.exportMe()
        } catch {
            if case let saved as BodyToFile.Saved = (error as? ClientError)?.underlyingError { return saved.bytes }
            throw FitBaseError(thrownByCall: error)
        }
        // The middleware answers every success by saving it; reaching here is an answer it did not see.
        throw .unexpectedResponse(statusCode: 200)
    }
}

/// Writes a successful answer's body to a file as it streams, instead of handing it to the generated decoder, and
/// ends the call with ``Saved`` (how a middleware can stop an operation whose body it has consumed). Refusals pass on
/// untouched to ``ProblemAnswers``, and a `401` to the session's refresh and retry.
struct BodyToFile: ClientMiddleware {
    /// The body is in the file: this many bytes.
    struct Saved: Error {
        let bytes: Int64
    }

    let destination: URL

    /// Where the bytes go until the body is complete.
    var partial: URL { destination.appendingPathExtension("partial") }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, answer) = try await next(request, body, baseURL)
        guard response.status.kind == .successful else { return (response, answer) }
        throw Saved(bytes: try await save(answer))
    }

    private func save(_ body: HTTPBody?) async throws -> Int64 {
        let files = FileManager.default
        try? files.removeItem(at: partial)
        guard files.createFile(atPath: partial.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw FitBaseError.storage("cannot create \(partial.path)")
        }
        var written: Int64 = 0
        do {
            let handle: FileHandle
            do { handle = try FileHandle(forWritingTo: partial) } catch { throw FitBaseError.storage(String(describing: error)) }
            defer { try? handle.close() }
            // A chunk that fails to arrive is the transport's failure; one that fails to land is the device's.
            for try await chunk in body ?? HTTPBody() {
                do { try handle.write(contentsOf: chunk) } catch { throw FitBaseError.storage(String(describing: error)) }
                written += Int64(chunk.count)
            }
        } catch {
            try? files.removeItem(at: partial)
            throw error
        }
        do {
            if files.fileExists(atPath: destination.path) { try files.removeItem(at: destination) }
            try files.moveItem(at: partial, to: destination)
        } catch {
            try? files.removeItem(at: partial)
            throw FitBaseError.storage(String(describing: error))
        }
        return written
    }
}
