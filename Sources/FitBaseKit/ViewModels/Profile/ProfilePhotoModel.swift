import FitBaseClient
import FitBaseCore
import Foundation
import Observation

/// A user's profile photo on screen (the profile header, a group member's avatar): the image in the size the screen
/// shows, read through the image cache, and — for the signed-in user's own — replacing it with a progress bar, or
/// removing it.
@MainActor @Observable
public final class ProfilePhotoModel {
    /// Whose photo it is.
    public let user: UserID
    /// The size the screen shows.
    public let size: PhotoSize
    /// The image's bytes (`nil`: no photo, or not loaded yet).
    public private(set) var image: Data?
    public private(set) var isLoading = false
    /// How far an upload has gone (`nil` when none is under way).
    public private(set) var uploadProgress: UploadProgress?
    public private(set) var error: ScreenError?
    /// The server's complaint about an uploaded image, under `photo`.
    public private(set) var fieldErrors: [String: String] = [:]

    private let media: any MediaService

    /// A model of `user`'s photo in `size`.
    public init(user: UserID, size: PhotoSize = .thumbnail, dependencies: FitBaseDependencies) {
        self.user = user
        self.size = size
        media = dependencies.media
    }

    /// Reads the image (from the cache when the photo has not changed).
    public func load() async {
        isLoading = true
        defer { isLoading = false }
        do throws(KitError) {
            image = try await media.profilePhotoImage(of: user, size: size)
            error = nil
        } catch {
            present(error)
        }
    }

    /// Replaces the signed-in user's photo with `imageData`, following the upload in ``uploadProgress``, then shows the
    /// new photo.
    public func upload(_ imageData: Data) async {
        fieldErrors = [:]
        let (updates, continuation) = AsyncStream.makeStream(of: UploadProgress.self, bufferingPolicy: .bufferingNewest(1))
        let follower = Task { @MainActor [weak self] in
            for await progress in updates { self?.uploadProgress = progress }
        }
        uploadProgress = UploadProgress(sent: 0, total: Int64(imageData.count))
        do throws(KitError) {
            _ = try await media.uploadProfilePhoto(imageData) { progress in continuation.yield(progress) }
            continuation.finish()
            await follower.value
            uploadProgress = nil
            error = nil
            await load()
        } catch {
            continuation.finish()
            await follower.value
            uploadProgress = nil
            fieldErrors = error.fieldErrors
            present(error)
        }
    }

    /// Removes the signed-in user's photo.
    public func remove() async {
        do throws(KitError) {
            try await media.removeProfilePhoto()
            image = nil
            error = nil
        } catch {
            present(error)
        }
    }

    private func present(_ failure: KitError) {
        guard !failure.isCancellation else { return }
        error = ScreenError(failure)
    }
}
