import FitBaseAPI
import FitBaseCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIRuntime

/// Workout thumbnails and videos: admins upload them, anyone (or, for a premium workout's video, an entitled caller)
/// gets an expiring link to them.
extension MediaOperations {
    /// The generated handler's answer (kept for when direct routes are off), over the body the transport collected.
    /// ``catalogMediaRoutes`` streams the body to the store instead.
    func uploadWorkoutMedia(_ input: Operations.UploadWorkoutMedia.Input) async throws -> Operations.UploadWorkoutMedia.Output {
        try Self.requireAdmin()
        guard let workout = WorkoutID(input.path.workoutId) else { throw Problem.notFound("No workout \(input.path.workoutId).") }
        let body: HTTPBody
        switch input.body {
        case .jpeg(let bytes), .png(let bytes), .imageHeic(let bytes), .videoMp4(let bytes), .videoQuicktime(let bytes), .binary(let bytes):
            body = bytes
        }
        let kind: WorkoutMediaKind = input.path.kind == .video ? .video : .thumbnail
        let media = try await mediaFeature.catalogMedia.uploads.upload(
            HTTPBodyBuffers(body: body), kind: kind, to: workout, now: clock.now)
        return .ok(.init(body: .json(Self.wire(media))))
    }

    func getWorkoutMedia(_ input: Operations.GetWorkoutMedia.Input) async throws -> Operations.GetWorkoutMedia.Output {
        guard let workout = WorkoutID(input.path.workoutId) else { throw Problem.notFound("No workout \(input.path.workoutId).") }
        let kind: WorkoutMediaKind = input.path.kind == .video ? .video : .thumbnail
        let (media, url, expiresAt) = try await mediaFeature.catalogMedia.link(
            workout, kind, caller: RequestScope.current.caller, now: clock.now)
        return .ok(.init(body: .json(.init(media: Self.wire(media), url: url, expiresAt: expiresAt))))
    }

    /// `PUT /v1/admin/workouts/{workoutId}/media/{kind}` answered without the generated server: the body goes to the
    /// store as it arrives (the body limit leaves it unread for this route), so a video is never whole in memory. The
    /// caller's role and the kind are checked before a byte of it is read.
    var catalogMediaRoutes: [DirectRoute] {
        [
            DirectRoute(method: .put, path: "/v1/admin/workouts/{workoutId}/media/{kind}") { request, context in
                try Self.requireAdmin()
                guard let raw = context.parameters.get("kind"), let kind = WorkoutMediaKind(rawValue: raw) else {
                    let value = context.parameters.get("kind") ?? ""
                    throw Problem.invalidRequest(
                        "kind must be thumbnail or video.", fieldErrors: [.init(field: "kind", message: "has an invalid value \"\(value)\"")])
                }
                guard let rawID = context.parameters.get("workoutId"), let workout = WorkoutID(rawID) else {
                    throw Problem.notFound("No workout \(context.parameters.get("workoutId") ?? "").")
                }
                let media = try await mediaFeature.catalogMedia.uploads.upload(request.body, kind: kind, to: workout, now: clock.now)
                return DirectRoute.json(ByteBuffer(bytes: try DirectRoute.encoder.encode(Self.wire(media))), status: .ok)
            }
        ]
    }

    static func wire(_ media: WorkoutMedia) -> Components.Schemas.WorkoutMedia {
        .init(kind: media.kind.rawValue, version: media.version, digest: media.digest, contentType: media.contentType, bytes: media.bytes, updatedAt: media.updatedAt)
    }

    private static func requireAdmin() throws(Problem) {
        guard try RequestScope.requireCaller().role == .admin else {
            throw Problem(.forbidden, code: .forbidden, detail: "Managing the catalog needs the admin role.")
        }
    }
}

/// A generated handler's body as the buffers a media store takes.
private struct HTTPBodyBuffers: AsyncSequence, Sendable {
    let body: HTTPBody

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: HTTPBody.AsyncIterator

        mutating func next() async throws -> ByteBuffer? {
            try await base.next().map { ByteBuffer(bytes: $0) }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: body.makeAsyncIterator()) }
}
