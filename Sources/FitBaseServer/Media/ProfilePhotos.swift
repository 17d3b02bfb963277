import FitBaseCore
import Foundation
import Logging
import NIOCore

/// Profile photos: upload (checked, cleaned, stored as a new object), removal, and expiring links for the owner and
/// the members of the owner's group.
struct ProfilePhotos: Sendable {
    let store: ProfilePhotoStore
    let storage: any MediaStorage
    let inspector: ImageInspector
    let links: MediaLinks
    let linkLifetime: Duration
    let maxBytes: Int
    let database: Database
    let logger: Logger

    /// Checks `bytes`, stores the cleaned image as the user's new photo and deletes the previous one's object. Bad
    /// input throws a problem naming `photo`; nothing is stored then.
    func upload(_ bytes: [UInt8], for user: UserID, now: Date) async throws -> ProfilePhoto {
        guard bytes.count <= maxBytes else { throw Problem.payloadTooLarge(limit: maxBytes) }
        let image: InspectedImage
        do {
            image = try inspector.inspect(bytes)
        } catch {
            throw Problem.validationFailed([.init(field: "photo", message: Self.message(for: error))])
        }
        var version = try await store.nextVersion(of: user)
        guard let key = ProfilePhoto.newKey(of: user, version: version, format: image.format) else {
            throw MediaStorageError.storeFailed("no object key for user \(user)")
        }
        let stored = try await storage.put(key, contentType: image.format.contentType, body: WholeBody(ByteBuffer(bytes: image.bytes)))
        do {
            // A concurrent upload of the same user may record its version first: this one then takes the next.
            for _ in 0..<5 {
                let photo = ProfilePhoto(
                    user: user, version: version, format: image.format, width: image.width, height: image.height, bytes: stored.size,
                    updatedAt: now, key: key)
                do {
                    if let previous = try await store.record(photo) { await deleteObject(previous.key) }
                    return photo
                } catch is ProfilePhotoStore.Superseded {
                    version = try await store.nextVersion(of: user)
                }
            }
            throw MediaStorageError.storeFailed("too many concurrent uploads of one photo")
        } catch {
            await deleteObject(key)
            throw error
        }
    }

    /// Removes the user's photo and its object.
    func remove(of user: UserID) async throws {
        if let previous = try await store.remove(user) { await deleteObject(previous.key) }
    }

    /// The photo of `owner` and a link to it valid from `now`, when `caller` may see it (the owner, or a member of the
    /// owner's group); `nil` otherwise, as for a user without a photo.
    func link(to owner: UserID, for caller: UserID, now: Date) async throws -> (photo: ProfilePhoto, url: String, expiresAt: Date)? {
        if caller != owner {
            let (theirs, mine) = try await database.withConnection { db in
                (try await GroupStore.membership(of: owner, on: db), try await GroupStore.membership(of: caller, on: db))
            }
            guard let theirs, let mine, theirs.group == mine.group else { return nil }
        }
        guard let photo = try await store.photo(of: owner) else { return nil }
        let expiry = now.addingTimeInterval(Double(linkLifetime.components.seconds))
        let url = storage.presignedURL(for: photo.key, expires: linkLifetime, now: now) ?? links.url(for: photo.key, expiry: expiry)
        return (photo, url, expiry)
    }

    /// Deletes an object no row names any more; a failure is logged (the object stays under the user's prefix, which
    /// the account's deletion clears).
    private func deleteObject(_ key: MediaKey) async {
        do {
            try await storage.delete(key)
        } catch {
            logger.warning("could not delete a replaced media object", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }

    static func message(for problem: ImageProblem) -> String {
        switch problem {
        case .unsupported: "is not a JPEG, PNG or HEIC image"
        case .truncated(let reason): "is cut off or damaged: \(reason)"
        case .tooLarge(let width, let height, let limit): "is \(width)×\(height) pixels; at most \(limit) pixels a side are accepted"
        }
    }
}
