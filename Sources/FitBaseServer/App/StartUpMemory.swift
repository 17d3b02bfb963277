#if canImport(Glibc)
import Glibc
#endif

/// Hands back, once the server listens, the memory only start-up used.
///
/// Of the ~50 MB a freshly started server kept resident, ~40 MB were pages of code mapped from the executable and the
/// Swift libraries — most of it touched once, by start-up alone (argument parsing, configuration, migrations of both
/// engines, key loading, the demo catalog) — and the rest heap that start-up freed but malloc kept. This returns the
/// freed heap to the system (`malloc_trim`) and drops the process's mappings of read-only code pages
/// (`MADV_DONTNEED` on the `r-xp` file mappings: their contents are the file's, so the next touch maps the same page
/// back from the page cache, a minor fault). Requests then bring back exactly the code they run. Writable or anonymous
/// memory is never touched. Linux only; elsewhere it does nothing.
public enum StartUpMemory {
    public static func release() {
        #if canImport(Glibc)
        // glibc's malloc_trim, which the Glibc module does not export (it is declared in malloc.h).
        if let trim = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
        }
        guard let maps = fopen("/proc/self/maps", "r") else { return }
        defer { fclose(maps) }
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), maps) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // "start-end perms offset dev inode path": code is "r-xp" and backed by a file (an absolute path).
            let fields = text.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "r-xp", fields[5].hasPrefix("/") else { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16), end > start else { continue }
            _ = madvise(UnsafeMutableRawPointer(bitPattern: start), Int(end - start), MADV_DONTNEED)
        }
        #endif
    }
}
