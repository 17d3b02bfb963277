import FitBaseCore
import Foundation

/// Images kept on the device, keyed by ``MediaCacheKey`` (owner, content digest, size): a new photo has a new key, so
/// nothing here is ever stale and nothing needs invalidating — old entries just age out. Two tiers, each bounded in
/// bytes and evicting the least recently used entry first: memory, and a directory (one file per image, readable by
/// its owner only; the order of use survives a relaunch through the files' modification dates).
public actor ImageCache {
    private struct Entry {
        var bytes: Int
        var lastUse: UInt64
    }

    private let directory: URL?
    /// The most bytes each tier holds.
    public let memoryLimit: Int
    public let diskLimit: Int
    private var memory: [MediaCacheKey: (data: Data, lastUse: UInt64)] = [:]
    private var memoryBytes = 0
    private var disk: [MediaCacheKey: Entry] = [:]
    private var diskBytes = 0
    private var tick: UInt64 = 0

    /// A cache holding up to `memoryLimit` bytes in memory and `diskLimit` bytes in `directory` (`nil`: memory only).
    /// What the directory already holds is counted, oldest first.
    public init(directory: URL?, memoryLimit: Int = 16 << 20, diskLimit: Int = 128 << 20) {
        self.directory = directory
        self.memoryLimit = memoryLimit
        self.diskLimit = diskLimit
        guard let directory else { return }
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.fileSizeKey, .contentModificationDateKey])) ?? []
        let found = files.compactMap { url -> (MediaCacheKey, Int, Date)? in
            guard let values = try? url.resourceValues(forKeys: [.fileSizeKey, .contentModificationDateKey]), let size = values.fileSize,
                let key = MediaCacheKey(fileName: url.lastPathComponent)
            else { return nil }
            return (key, size, values.contentModificationDate ?? .distantPast)
        }
        // Newest first: what fits is kept, the older rest removed.
        var kept = 0
        for (key, size, _) in found.sorted(by: { $0.2 > $1.2 }) {
            guard kept + size <= diskLimit else {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(key.rawValue))
                continue
            }
            kept += size
            disk[key] = Entry(bytes: size, lastUse: 0)
        }
        diskBytes = kept
        // Ticks in the files' order, oldest lowest.
        var tick: UInt64 = 0
        for (key, _, _) in found.sorted(by: { $0.2 < $1.2 }) where disk[key] != nil {
            tick += 1
            disk[key]?.lastUse = tick
        }
        self.tick = tick
    }

    /// The bytes kept under `key`, from memory or else from disk (then kept in memory too); nil when neither has them.
    public func data(for key: MediaCacheKey) -> Data? {
        tick += 1
        if let hit = memory[key] {
            memory[key] = (hit.data, tick)
            disk[key]?.lastUse = tick
            return hit.data
        }
        guard let url = file(for: key), disk[key] != nil else { return nil }
        guard let data = try? Data(contentsOf: url) else {
            forget(key)
            return nil
        }
        touch(key)
        keepInMemory(data, for: key)
        return data
    }

    /// Keeps `data` under `key` in both tiers (an image larger than a tier's limit is not kept there), evicting the
    /// least recently used entries past the limits.
    public func store(_ data: Data, for key: MediaCacheKey) {
        tick += 1
        keepInMemory(data, for: key)
        guard let url = file(for: key), data.count <= diskLimit else { return }
        if let previous = disk.removeValue(forKey: key) { diskBytes -= previous.bytes }
        guard (try? data.write(to: url, options: .atomic)) != nil else { return }
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        disk[key] = Entry(bytes: data.count, lastUse: tick)
        diskBytes += data.count
        evictDisk()
    }

    /// Forgets every image (at sign-out: other people's photos must not outlive the session).
    public func removeAll() {
        memory = [:]
        memoryBytes = 0
        for key in disk.keys { if let url = file(for: key) { try? FileManager.default.removeItem(at: url) } }
        disk = [:]
        diskBytes = 0
    }

    /// What each tier holds now, in bytes and entries.
    public var usage: (memoryBytes: Int, memoryEntries: Int, diskBytes: Int, diskEntries: Int) {
        (memoryBytes, memory.count, diskBytes, disk.count)
    }

    private func keepInMemory(_ data: Data, for key: MediaCacheKey) {
        if let previous = memory.removeValue(forKey: key) { memoryBytes -= previous.data.count }
        guard data.count <= memoryLimit else { return }
        memory[key] = (data, tick)
        memoryBytes += data.count
        while memoryBytes > memoryLimit, let oldest = memory.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            memory[oldest.key] = nil
            memoryBytes -= oldest.value.data.count
        }
    }

    private func evictDisk() {
        while diskBytes > diskLimit, let oldest = disk.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            forget(oldest.key)
        }
    }

    private func forget(_ key: MediaCacheKey) {
        if let entry = disk.removeValue(forKey: key) { diskBytes -= entry.bytes }
        if let url = file(for: key) { try? FileManager.default.removeItem(at: url) }
    }

    /// Marks `key` read from disk now, in its file's modification date too, so the order survives a relaunch.
    private func touch(_ key: MediaCacheKey) {
        guard disk[key] != nil else { return }
        disk[key]?.lastUse = tick
        if let url = file(for: key) { try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: url.path) }
    }

    private func file(for key: MediaCacheKey) -> URL? {
        directory?.appendingPathComponent(key.rawValue)
    }
}

extension MediaCacheKey {
    /// The key a cache file's name is (nil for anything else in the directory).
    init?(fileName: String) {
        guard fileName.hasPrefix("photo-") || fileName.hasPrefix("workout-"),
            fileName.unicodeScalars.allSatisfy({ $0.properties.isASCIIHexDigit || ("a"..."z").contains($0) || $0 == "-" })
        else { return nil }
        self.init(rawValue: fileName)
    }
}
