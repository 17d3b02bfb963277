import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// How far an upload has gone: bytes handed to the network so far, of the whole body.
public struct UploadProgress: Sendable, Equatable {
    /// Bytes handed to the network (the transport asks for the next chunk only once it has taken the last one).
    public var sent: Int64
    /// The body's size.
    public var total: Int64

    /// Makes a progress value.
    public init(sent: Int64, total: Int64) {
        self.sent = sent
        self.total = total
    }

    /// `sent / total`, from 0 to 1.
    public var fraction: Double { total > 0 ? Double(sent) / Double(total) : 1 }
}

extension FitBaseClient {
    /// Replaces the signed-in user's profile photo with `image` (JPEG, PNG or HEIC; the server recognises it from its
    /// bytes, removes its metadata and makes its thumbnail), calling `progress` as the body goes out (in 64 KiB
    /// chunks; from 0 again if the call is sent again after a token refresh). Fails with `.problem` —
    /// `validationFailed` naming `photo` (not an image, damaged, too many pixels) or `payloadTooLarge`.
    public func uploadProfilePhoto(
        _ image: Data, progress: @escaping @Sendable (UploadProgress) -> Void = { _ in }
    ) async throws(FitBaseError) -> ProfilePhotoInfo {
        let bytes = [UInt8](image)
        let body = HTTPBody(
            ProgressChunks(bytes: bytes, chunkSize: 64 << 10, report: progress), length: .known(Int64(bytes.count)), iterationBehavior: .multiple)
        let typed: Operations.UploadMyPhoto.Input.Body =
            if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
                .jpeg(body)
            } else if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
                .png(body)
            } else if bytes.count >= 12, bytes[4..<8].elementsEqual("ftyp".utf8) {
                .imageHeic(body)
            } else {
                .binary(body)
            }
        return try Self.photo(try await call { try await self.api.uploadMyPhoto(body: typed).ok.body.json })
    }

    /// Removes the signed-in user's profile photo; no error when there is none.
    public func removeProfilePhoto() async throws(FitBaseError) {
        _ = try await call { try await self.api.deleteMyPhoto().noContent }
    }

    /// `user`'s profile photo in `size` with an expiring link to the image, or `nil` when there is none the signed-in
    /// user may see (only the user and the members of the user's group may). Read the image with
    /// ``downloadMedia(_:upTo:)`` before ``MediaLink/expiresAt``, or ask again.
    public func profilePhoto(of user: UserID, size: PhotoSize = .full) async throws(FitBaseError) -> ProfilePhotoLink? {
        let query = Operations.GetUserPhoto.Input.Query(size: size == .thumbnail ? .thumbnail : .full)
        let answer: Components.Schemas.ProfilePhotoLink
        do throws(FitBaseError) {
            answer = try await call { try await self.api.getUserPhoto(path: .init(userId: user.description), query: query).ok.body.json }
        } catch where error.statusCode == 404 {
            return nil
        }
        guard let url = URL(string: answer.url) else { throw .unexpectedResponse(statusCode: 200) }
        return ProfilePhotoLink(
            owner: user, photo: try Self.photo(answer.photo), size: answer.size == .thumbnail ? .thumbnail : .full,
            contentType: answer.contentType, width: answer.width, height: answer.height, link: MediaLink(url: url, expiresAt: answer.expiresAt))
    }

    /// A workout's thumbnail or video with an expiring link to it. A premium workout's video needs a caller entitled
    /// to premium content now (`.problem` with `upgradeRequired` otherwise); ask again when playback starts and when
    /// the link has expired.
    public func workoutMedia(_ workout: WorkoutID, kind: WorkoutMediaKind) async throws(FitBaseError) -> WorkoutMediaLink {
        let path = Operations.GetWorkoutMedia.Input.Path(workoutId: workout.description, kind: kind == .video ? .video : .thumbnail)
        let answer = try await call { try await self.api.getWorkoutMedia(path: path).ok.body.json }
        guard let url = URL(string: answer.url) else { throw .unexpectedResponse(statusCode: 200) }
        return WorkoutMediaLink(
            workout: workout, kind: kind, version: answer.media.version, digest: answer.media.digest, contentType: answer.media.contentType,
            bytes: answer.media.bytes, updatedAt: answer.media.updatedAt, link: MediaLink(url: url, expiresAt: answer.expiresAt))
    }

    /// The bytes behind `link` (at most `limit`), read over the client's transport without the session's token: the
    /// link is the credential (a presigned S3 URL would refuse a second one). A link past its expiry, or changed, is
    /// refused with `.problem` (`tokenExpired`, `tokenInvalid`) from FitBase or `.unexpectedResponse(403)` from S3.
    public func downloadMedia(_ link: MediaLink, upTo limit: Int = 32 << 20) async throws(FitBaseError) -> Data {
        guard let components = URLComponents(url: link.url, resolvingAgainstBaseURL: false), let scheme = components.scheme,
            let host = components.host, let base = URL(string: "\(scheme)://\(host)\(components.port.map { ":\($0)" } ?? "")")
        else { throw .transport("not a link: \(link.url)") }
        let path = (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
            + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: path)
        do {
            let (response, body) = try await transport.send(request, body: nil, baseURL: base, operationID: "getMedia")
            var data = Data()
            if let body { data = try await Data(collecting: body, upTo: limit) }
            guard (200..<300).contains(response.status.code) else {
                let refusal = FitBaseError.answer(response, body: data)
                // A store's own refusal (S3 answers XML: `AccessDenied`, `Request has expired`) reads as FitBase's.
                if case .unexpectedResponse(403) = refusal { throw FitBaseError.problem(Self.storeRefusal) }
                throw refusal
            }
            return data
        } catch {
            throw FitBaseError(thrownByCall: error)
        }
    }

    /// What an S3-compatible store's `403` to a presigned link means: the link expired or was changed.
    private static let storeRefusal = APIProblem(forbidden: "The media store refused the link: it has expired or was changed.")

    private static func photo(_ wire: Components.Schemas.ProfilePhoto) throws(FitBaseError) -> ProfilePhotoInfo {
        try ContractJSON.record(ProfilePhotoInfo.self, from: wire)
    }
}

/// An upload's bytes in chunks, reporting each chunk as the transport takes it. Iterable again (a request sent again
/// after a token refresh reports from 0 again).
struct ProgressChunks: AsyncSequence, Sendable {
    let bytes: [UInt8]
    let chunkSize: Int
    let report: @Sendable (UploadProgress) -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        let chunks: ProgressChunks
        var offset = 0

        mutating func next() async -> ArraySlice<UInt8>? {
            guard offset < chunks.bytes.count else { return nil }
            let end = Swift.min(chunks.bytes.count, offset + chunks.chunkSize)
            let chunk = chunks.bytes[offset..<end]
            offset = end
            chunks.report(UploadProgress(sent: Int64(end), total: Int64(chunks.bytes.count)))
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: self) }
}

extension APIProblem {
    /// A `403 forbidden` problem the SDK reports itself (a store's refusal that carries no problem document).
    init(forbidden detail: String) {
        code = .forbidden
        rawCode = ProblemCode.forbidden.rawValue
        status = 403
        title = "Forbidden"
        self.detail = detail
        fieldErrors = []
        requestID = nil
        requiredTier = nil
        rawRequiredTier = nil
    }
}
