import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIRuntime

/// Profile photos and the media links: upload and removal of the caller's photo, a link to a photo the caller may
/// see, and the bytes behind a link.
protocol MediaOperations: FeatureOperations { var mediaFeature: MediaFeature { get } }

extension MediaOperations {
    func uploadMyPhoto(_ input: Operations.UploadMyPhoto.Input) async throws -> Operations.UploadMyPhoto.Output {
        let caller = try RequestScope.requireCaller()
        let body: HTTPBody
        switch input.body {
        case .jpeg(let bytes), .png(let bytes), .imageHeic(let bytes), .binary(let bytes): body = bytes
        }
        // The body limit has already refused more than the photo limit; one byte over it is still reported as such.
        let bytes = try await [UInt8](collecting: body, upTo: mediaFeature.configuration.photoMaxBytes + 1)
        let photo = try await mediaFeature.photos.upload(bytes, for: caller.user, now: clock.now)
        return .ok(.init(body: .json(Self.wire(photo))))
    }

    func deleteMyPhoto(_ input: Operations.DeleteMyPhoto.Input) async throws -> Operations.DeleteMyPhoto.Output {
        let caller = try RequestScope.requireCaller()
        try await mediaFeature.photos.remove(of: caller.user)
        return .noContent(.init())
    }

    func getUserPhoto(_ input: Operations.GetUserPhoto.Input) async throws -> Operations.GetUserPhoto.Output {
        let caller = try RequestScope.requireCaller()
        let size: PhotoSize = input.query.size == .thumbnail ? .thumbnail : .full
        guard let owner = UserID(input.path.userId),
            let link = try await mediaFeature.photos.link(to: owner, for: caller.user, size: size, now: clock.now)
        else {
            throw Problem.notFound("No photo of user \(input.path.userId) that you may see.")
        }
        return .ok(.init(body: .json(.init(
            photo: Self.wire(link.photo), size: link.size == .thumbnail ? .thumbnail : .full, contentType: link.format.contentType,
            width: link.width, height: link.height, url: link.url, expiresAt: link.expiresAt
        ))))
    }

    /// The generated handler's answer (kept for when direct routes are off): the whole object, read into memory, even
    /// for a `Range` (as HTTP allows: the generated server would percent-encode `Content-Range`, and `Cache-Control`
    /// too, which it leaves out). ``mediaRoutes`` streams the object and answers ranges.
    func getMedia(_ input: Operations.GetMedia.Input) async throws -> Operations.GetMedia.Output {
        let opened = try await mediaFeature.open(token: input.path.token, range: nil, now: clock.now)
        let bytes = try await opened.content.collect(upTo: Int(opened.content.range.map { $0.count } ?? 0))
        let body = HTTPBody(bytes.readableBytesView)
        let typed: Operations.GetMedia.Output.Ok.Body =
            switch opened.content.contentType {
            case "image/jpeg": .jpeg(body)
            case "image/png": .png(body)
            case "image/heic": .imageHeic(body)
            case "video/mp4": .videoMp4(body)
            case "video/quicktime": .videoQuicktime(body)
            default: .binary(body)
            }
        return .ok(.init(headers: .init(acceptRanges: "bytes"), body: typed))
    }

    /// `GET /v1/media/{token}` answered without the generated server: the bytes are streamed from the store as the
    /// connection takes them (a video is never held in memory).
    var mediaRoutes: [DirectRoute] {
        [
            DirectRoute(method: .get, path: "/v1/media/{token}") { request, context in
                guard let token = context.parameters.get("token") else { return nil }
                let opened = try await mediaFeature.open(token: token, range: request.headers[.range], now: clock.now)
                let content = opened.content
                let length = content.range.map { Int($0.count) } ?? 0
                // A file in the data directory goes out through the kernel on a live connection (sendfile).
                let sender = content.localFile == nil ? nil : FileRegionResponses.handler(of: context.channel)
                return Response(
                    status: opened.status, headers: opened.headers,
                    body: ResponseBody(contentLength: length) { writer in
                        if let sender, let file = content.localFile, let bytes = content.range {
                            try await FileRegionResponses.send(file, bytes: bytes, through: sender, writer: &writer)
                            return
                        }
                        try await content.read { chunk in try await writer.write(chunk) }
                        try await writer.finish(nil)
                    }
                )
            }
        ]
    }

    static func wire(_ photo: ProfilePhoto) -> Components.Schemas.ProfilePhoto {
        .init(
            version: photo.version, digest: photo.digest, contentType: photo.format.contentType, width: photo.width, height: photo.height, bytes: photo.bytes,
            updatedAt: photo.updatedAt
        )
    }
}

/// An object behind a media link, opened for reading, and the head of its answer (the router's route and
/// ``MediaLinkRoute`` send the same).
struct OpenedMedia: Sendable {
    let content: MediaContent
    /// `bytes first-last/size` when a range was asked for.
    let contentRange: String?
    /// `private, max-age=<seconds the link has left>`.
    let cacheControl: String

    /// `content` as read for a link expiring at `expiry`; `ranged` when the request asked for a range.
    init(content: MediaContent, ranged: Bool, expiry: Date, now: Date) {
        self.content = content
        contentRange = ranged ? content.range.map { "bytes \($0.lowerBound)-\($0.upperBound)/\(content.size)" } : nil
        cacheControl = "private, max-age=\(max(0, Int(expiry.timeIntervalSince(now))))"
    }

    var status: HTTPResponse.Status { contentRange == nil ? .ok : .partialContent }

    /// What every media answer says to a browser, whatever the object holds: take the declared type as it is (no
    /// sniffing an image into HTML), and run nothing of it — media shares the console's origin, and a sandboxed
    /// answer with no source allowed cannot script it, load from it or be framed by it.
    static let contentPolicy = "default-src 'none'; img-src 'self'; media-src 'self'; sandbox; frame-ancestors 'none'"

    /// The answer's fields but its length.
    var headers: HTTPFields {
        var headers: HTTPFields = [
            .contentType: content.contentType, .acceptRanges: "bytes", .cacheControl: cacheControl, .xContentTypeOptions: "nosniff",
            .contentSecurityPolicy: Self.contentPolicy,
        ]
        if let contentRange { headers[.contentRange] = contentRange }
        return headers
    }
}

extension MediaFeature {
    /// The object `token` names with the range `rangeHeader` asks for (ignored when it is not one valid byte range).
    func open(token: String, range rangeHeader: String?, now: Date) async throws -> OpenedMedia {
        let key: MediaKey, expiry: Date
        do {
            (key, expiry) = try links.key(of: token, now: now)
        } catch .invalid {
            throw Problem(.forbidden, code: .tokenInvalid, detail: "This media link is not valid.")
        } catch .expired {
            throw Problem(.forbidden, code: .tokenExpired, detail: "This media link has expired; ask for a new one.")
        }
        let range = rangeHeader.flatMap(MediaByteRange.init(header:))
        let content: MediaContent?
        do {
            content = try await storage.get(key, range: range)
        } catch MediaStorageError.rangeNotSatisfiable(let size) {
            throw Problem(
                .rangeNotSatisfiable, code: .rangeNotSatisfiable, detail: "The range starts past the end of the object (\(size) bytes).",
                headers: [.contentRange: "bytes */\(size)"])
        }
        guard let content else { throw Problem.notFound("The object this link names is gone.") }
        return OpenedMedia(content: content, ranged: range != nil, expiry: expiry, now: now)
    }
}
