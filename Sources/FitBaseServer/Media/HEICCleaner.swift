/// HEIC (ISO base media file format): top-level boxes walked to the end of the file (a cut-off file is refused), the
/// size read from the image spatial extents (`ispe`), and the Exif and XMP items' bytes overwritten with zeros where
/// `iloc` places them: the file keeps its layout, so no offset needs rewriting, and the position, time and camera
/// are gone.
enum HEICCleaner {
    private static let brands: Set<String> = ["heic", "heix", "heim", "heis", "hevc", "hevx"]

    /// Whether the file starts with an `ftyp` box naming a HEIC brand.
    static func isHEIC(_ bytes: [UInt8]) -> Bool {
        let reader = ByteReader(bytes: bytes)
        guard let size = try? reader.uint32(at: 0), size >= 16, size <= bytes.count, (try? reader.fourCC(at: 4)) == "ftyp" else { return false }
        var names = [(try? reader.fourCC(at: 8)) ?? ""]
        for offset in stride(from: 16, to: size, by: 4) { names.append((try? reader.fourCC(at: offset)) ?? "") }
        return names.contains { brands.contains($0) }
    }

    struct Box {
        let type: String
        /// Where the box's content starts (after its header) and ends.
        let content: Range<Int>
    }

    /// The boxes in `range`, each checked to fit in it.
    static func boxes(in range: Range<Int>, of reader: ByteReader) throws(ImageProblem) -> [Box] {
        var found: [Box] = []
        var offset = range.lowerBound
        while offset < range.upperBound {
            var size = try reader.uint32(at: offset)
            let type = try reader.fourCC(at: offset + 4)
            var header = 8
            if size == 1 {
                size = try reader.uint64(at: offset + 8)
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header, offset + size <= range.upperBound else { throw .truncated("the HEIC box \(type) runs past the end of the file") }
            found.append(Box(type: type, content: (offset + header)..<(offset + size)))
            offset += size
        }
        return found
    }

    static func clean(_ bytes: [UInt8]) throws(ImageProblem) -> InspectedImage {
        let reader = ByteReader(bytes: bytes)
        let top = try boxes(in: 0..<bytes.count, of: reader)
        guard let meta = top.first(where: { $0.type == "meta" }), top.contains(where: { $0.type == "mdat" }) else {
            throw .truncated("the HEIC has no metadata or no image data")
        }
        // meta is a full box: version and flags first.
        let children = try boxes(in: (meta.content.lowerBound + 4)..<meta.content.upperBound, of: reader)
        var size = (width: 0, height: 0)
        if let properties = children.first(where: { $0.type == "iprp" }),
            let container = try boxes(in: properties.content, of: reader).first(where: { $0.type == "ipco" })
        {
            for property in try boxes(in: container.content, of: reader) where property.type == "ispe" {
                let width = try reader.uint32(at: property.content.lowerBound + 4)
                let height = try reader.uint32(at: property.content.lowerBound + 8)
                if width * height > size.width * size.height { size = (width, height) }
            }
        }
        var cleaned = bytes
        let metadataItems = try metadataItemIDs(children.first { $0.type == "iinf" }, reader)
        if !metadataItems.isEmpty, let locations = children.first(where: { $0.type == "iloc" }) {
            let itemData = children.first { $0.type == "idat" }?.content
            for extent in try extents(of: metadataItems, in: locations, reader, itemData: itemData) {
                guard extent.lowerBound >= 0, extent.upperBound <= cleaned.count else {
                    throw .truncated("a HEIC item lies outside the file")
                }
                for index in extent { cleaned[index] = 0 }
            }
        }
        return InspectedImage(format: .heic, width: size.width, height: size.height, bytes: cleaned)
    }

    /// The ids of the `Exif` items and of the `mime` items holding XMP, from `iinf`.
    private static func metadataItemIDs(_ info: Box?, _ reader: ByteReader) throws(ImageProblem) -> Set<Int> {
        guard let info else { return [] }
        let version = reader.bytes[info.content.lowerBound]
        let entriesStart = info.content.lowerBound + 4 + (version == 0 ? 2 : 4)
        var ids: Set<Int> = []
        for entry in try boxes(in: entriesStart..<info.content.upperBound, of: reader) where entry.type == "infe" {
            let entryVersion = reader.bytes[entry.content.lowerBound]
            guard entryVersion >= 2 else { continue }
            var offset = entry.content.lowerBound + 4
            let id = entryVersion == 2 ? try reader.uint16(at: offset) : try reader.uint32(at: offset)
            offset += (entryVersion == 2 ? 2 : 4) + 2
            let type = try reader.fourCC(at: offset)
            if type == "Exif" {
                ids.insert(id)
            } else if type == "mime" {
                // item_name, then content_type: both NUL-terminated.
                let strings = reader.bytes[(offset + 4)..<entry.content.upperBound].split(separator: 0, omittingEmptySubsequences: false)
                if strings.count > 1, String(decoding: strings[1], as: UTF8.self).contains("xmp") || String(decoding: strings[1], as: UTF8.self).contains("rdf") {
                    ids.insert(id)
                }
            }
        }
        return ids
    }

    /// Where in the file the bytes of `items` lie, from `iloc` (file offsets, or offsets into `idat`).
    private static func extents(
        of items: Set<Int>, in locations: Box, _ reader: ByteReader, itemData: Range<Int>?
    ) throws(ImageProblem) -> [Range<Int>] {
        var offset = locations.content.lowerBound
        let version = reader.bytes[offset]
        offset += 4
        let sizes = try reader.uint16(at: offset)
        offset += 2
        let (offsetSize, lengthSize, baseOffsetSize) = (sizes >> 12, (sizes >> 8) & 0xF, (sizes >> 4) & 0xF)
        let indexSize = version >= 1 ? sizes & 0xF : 0
        func field(_ width: Int) throws(ImageProblem) -> Int {
            defer { offset += width }
            switch width {
            case 0: return 0
            case 4: return try reader.uint32(at: offset)
            case 8: return try reader.uint64(at: offset)
            default: throw .truncated("the HEIC item locations use an unknown field size")
            }
        }
        let count = version < 2 ? try reader.uint16(at: offset) : try reader.uint32(at: offset)
        offset += version < 2 ? 2 : 4
        var found: [Range<Int>] = []
        for _ in 0..<count {
            let id = version < 2 ? try reader.uint16(at: offset) : try reader.uint32(at: offset)
            offset += version < 2 ? 2 : 4
            var method = 0
            if version >= 1 {
                method = try reader.uint16(at: offset) & 0xF
                offset += 2
            }
            offset += 2  // data reference index
            let base = try field(baseOffsetSize)
            let extentCount = try reader.uint16(at: offset)
            offset += 2
            for _ in 0..<extentCount {
                _ = try field(indexSize)
                let start = try field(offsetSize), length = try field(lengthSize)
                guard items.contains(id), length > 0 else { continue }
                switch method {
                case 0: found.append((base + start)..<(base + start + length))
                case 1:
                    guard let itemData else { throw .truncated("a HEIC item refers to item data that is missing") }
                    found.append((itemData.lowerBound + base + start)..<(itemData.lowerBound + base + start + length))
                default: continue
                }
            }
        }
        return found
    }
}
