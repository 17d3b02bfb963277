import FitBaseClient
import FitBaseCore
import Foundation

/// Profile photos and workout media (seed 001's media storage): uploading the user's photo with progress, expiring
/// links to photos and workout files, and images read through a cache keyed by their content's digest, so a replaced
/// photo never shows from the cache and an unchanged one is not downloaded again.
public protocol MediaService: Sendable {
    /// Replaces the signed-in user's photo with `image` (JPEG, PNG or HEIC), reporting the bytes sent as they go.
    /// `.invalidInput` naming `photo` when the server refuses the image.
    func uploadProfilePhoto(_ image: Data, progress: @escaping @Sendable (UploadProgress) -> Void) async throws(KitError) -> ProfilePhotoInfo
    /// Removes the signed-in user's photo.
    func removeProfilePhoto() async throws(KitError)
    /// `user`'s photo in `size` with an expiring link; `nil` when there is none the user may see.
    func profilePhoto(of user: UserID, size: PhotoSize) async throws(KitError) -> ProfilePhotoLink?
    /// A workout's thumbnail or video with an expiring link (`.upgradeRequired` for a premium video without the tier).
    func workoutMedia(_ workout: WorkoutID, kind: WorkoutMediaKind) async throws(KitError) -> WorkoutMediaLink
    /// The bytes cached under `key`, else those behind `link` (then cached under `key`).
    func imageData(_ key: MediaCacheKey, link: MediaLink) async throws(KitError) -> Data
}

extension MediaService {
    /// `user`'s photo in `size` as image bytes (`nil` when there is none the user may see): from the cache when the
    /// photo has not changed, else downloaded — with a new link, once, when the link was refused (it expired between
    /// the two requests).
    public func profilePhotoImage(of user: UserID, size: PhotoSize) async throws(KitError) -> Data? {
        guard let photo = try await profilePhoto(of: user, size: size) else { return nil }
        do {
            return try await imageData(photo.cacheKey, link: photo.link)
        } catch where error.isRefusedLink {
            guard let renewed = try await profilePhoto(of: user, size: size) else { return nil }
            return try await imageData(renewed.cacheKey, link: renewed.link)
        }
    }

    /// A workout's thumbnail as image bytes, from the cache when unchanged.
    public func workoutThumbnail(_ workout: WorkoutID) async throws(KitError) -> Data {
        let media = try await workoutMedia(workout, kind: .thumbnail)
        do {
            return try await imageData(media.cacheKey, link: media.link)
        } catch where error.isRefusedLink {
            let renewed = try await workoutMedia(workout, kind: .thumbnail)
            return try await imageData(renewed.cacheKey, link: renewed.link)
        }
    }
}

extension KitError {
    /// A media link was refused: expired (`token_expired`), changed (`token_invalid`), or a store's `403`.
    public var isRefusedLink: Bool {
        code == .tokenExpired || code == .tokenInvalid || kind == .forbidden
    }
}
