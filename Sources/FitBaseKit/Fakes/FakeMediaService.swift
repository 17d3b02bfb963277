import FitBaseClient
import FitBaseCore
import Foundation

/// An in-memory ``MediaService``: photos kept per user, links that expire ``linkLifetime`` after they are issued on the
/// services' clock (a link used after that is refused with `token_expired`, as the server refuses it), and premium
/// videos only for a caller the billing fake entitles.
public actor FakeMediaService: MediaService {
    /// What the knobs name: the service's operations.
    public enum Operation: String, FakeOperation {
        case uploadProfilePhoto, removeProfilePhoto, profilePhoto, workoutMedia, imageData
    }

    /// Latency, failures, the operations a test set up, and the calls received.
    public nonisolated let knobs = FakeKnobs<Operation>("FakeMediaService")
    private let clock: any KitClock
    private let auth: FakeAuthService
    private let catalog: FakeCatalogService
    /// How long a link lasts (the server's default: an hour).
    public var linkLifetime: Duration = .seconds(3_600)
    /// Each user's photo and its bytes.
    private var photos: [UserID: (info: ProfilePhotoInfo, image: Data)] = [:]
    /// The bytes behind each link issued, and when it ends.
    private var issued: [URL: (data: Data, expiresAt: Date)] = [:]
    private var linksIssued = 0

    /// A fake whose signed-in user comes from `auth` and whose premium access comes from `catalog`'s billing.
    public init(auth: FakeAuthService, catalog: FakeCatalogService, clock: any KitClock) {
        self.auth = auth
        self.catalog = catalog
        self.clock = clock
    }

    /// Sets how long links last.
    public func setLinkLifetime(_ lifetime: Duration) {
        linkLifetime = lifetime
    }

    public func uploadProfilePhoto(_ image: Data, progress: @escaping @Sendable (UploadProgress) -> Void) async throws(KitError) -> ProfilePhotoInfo {
        try await knobs.enter(.uploadProfilePhoto, clock: clock)
        guard let user = await auth.signedInUser()?.id else { throw .notSignedIn }
        let contentType: String
        if image.starts(with: [0xFF, 0xD8, 0xFF]) {
            contentType = "image/jpeg"
        } else if image.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            contentType = "image/png"
        } else {
            throw KitError(.invalidInput, fieldErrors: ["photo": "is not a JPEG, PNG or HEIC image"], code: .validationFailed)
        }
        var sent = 0
        while sent < image.count {
            sent = min(image.count, sent + 64 << 10)
            progress(UploadProgress(sent: Int64(sent), total: Int64(image.count)))
        }
        let info = ProfilePhotoInfo(
            version: (photos[user]?.info.version ?? 0) + 1, digest: Self.digest(image), contentType: contentType, width: 512, height: 512,
            bytes: Int64(image.count), updatedAt: clock.now)
        photos[user] = (info, image)
        return info
    }

    public func removeProfilePhoto() async throws(KitError) {
        try await knobs.enter(.removeProfilePhoto, clock: clock)
        guard let user = await auth.signedInUser()?.id else { throw .notSignedIn }
        photos[user] = nil
    }

    public func profilePhoto(of user: UserID, size: PhotoSize) async throws(KitError) -> ProfilePhotoLink? {
        try await knobs.enter(.profilePhoto, clock: clock)
        guard await auth.signedInUser()?.id != nil else { throw .notSignedIn }
        guard let photo = photos[user] else { return nil }
        let link = issue(photo.image, path: "users/\(user)/photo/\(size.rawValue)")
        return ProfilePhotoLink(
            owner: user, photo: photo.info, size: .full, contentType: photo.info.contentType, width: photo.info.width, height: photo.info.height,
            link: link)
    }

    public func workoutMedia(_ workout: WorkoutID, kind: WorkoutMediaKind) async throws(KitError) -> WorkoutMediaLink {
        try await knobs.enter(.workoutMedia, clock: clock)
        guard let entry = await catalog.catalog.first(where: { $0.id == workout }) else {
            throw KitError(.notFound, message: "This workout is no longer in the library.", code: .notFound)
        }
        if kind == .video, entry.isPremium, await !catalog.premiumEntitled() { throw .upgradeRequired(.premium) }
        let data = Data("\(kind.rawValue) of \(workout)".utf8)
        let link = issue(data, path: "catalog/workouts/\(workout)/\(kind.rawValue)")
        return WorkoutMediaLink(
            workout: workout, kind: kind, version: 1, digest: Self.digest(data), contentType: kind == .video ? "video/mp4" : "image/jpeg",
            bytes: Int64(data.count), updatedAt: clock.now, link: link)
    }

    public func imageData(_ key: MediaCacheKey, link: MediaLink) async throws(KitError) -> Data {
        try await knobs.enter(.imageData, clock: clock)
        guard let found = issued[link.url] else { throw KitError(.invalidInput, code: .tokenInvalid) }
        guard found.expiresAt > clock.now else { throw KitError(.invalidInput, message: "This media link has expired.", code: .tokenExpired) }
        return found.data
    }

    /// A new link to `data` (each link is new: its URL counts the links issued).
    private func issue(_ data: Data, path: String) -> MediaLink {
        linksIssued += 1
        let expiresAt = clock.now.addingTimeInterval(linkLifetime.timeInterval)
        let url = URL(string: "https://media.fitbase.example/\(path)?link=\(linksIssued)")!
        issued[url] = (data, expiresAt)
        return MediaLink(url: url, expiresAt: expiresAt)
    }

    /// A stand-in for the server's SHA-256: FNV-1a, 64 bits, in hex (a fake needs the digest to change with the bytes).
    static func digest(_ data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return String(hash, radix: 16)
    }
}
