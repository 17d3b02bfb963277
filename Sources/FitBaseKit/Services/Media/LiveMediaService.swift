import FitBaseClient
import FitBaseCore
import Foundation

/// ``MediaService`` over the SDK's media calls, with images kept in an ``ImageCache``.
public struct LiveMediaService: MediaService {
    let client: FitBaseClient
    let cache: ImageCache

    public func uploadProfilePhoto(_ image: Data, progress: @escaping @Sendable (UploadProgress) -> Void) async throws(KitError) -> ProfilePhotoInfo {
        do { return try await client.uploadProfilePhoto(image, progress: progress) } catch { throw KitError(error) }
    }

    public func removeProfilePhoto() async throws(KitError) {
        do { try await client.removeProfilePhoto() } catch { throw KitError(error) }
    }

    public func profilePhoto(of user: UserID, size: PhotoSize) async throws(KitError) -> ProfilePhotoLink? {
        do { return try await client.profilePhoto(of: user, size: size) } catch { throw KitError(error) }
    }

    public func workoutMedia(_ workout: WorkoutID, kind: WorkoutMediaKind) async throws(KitError) -> WorkoutMediaLink {
        do { return try await client.workoutMedia(workout, kind: kind) } catch { throw KitError(error) }
    }

    public func imageData(_ key: MediaCacheKey, link: MediaLink) async throws(KitError) -> Data {
        if let cached = await cache.data(for: key) { return cached }
        let data: Data
        do { data = try await client.downloadMedia(link, upTo: 32 << 20) } catch { throw KitError(error) }
        await cache.store(data, for: key)
        return data
    }
}
