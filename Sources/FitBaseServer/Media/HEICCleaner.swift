/// HEIC (ISO base media file format): top-level boxes walked to the end of the file (a cut-off file is refused), the
/// sizes read from every image spatial extent (`ispe`) and every grid's canvas, and the Exif and XMP items' bytes
/// overwritten with zeros where `iloc` places them: the file keeps its layout, so no offset needs rewriting, and the
/// position, time and camera are gone.
///
/// Every number the file declares (box sizes, item offsets and lengths, field widths, counts) is checked before it is
/// added, multiplied or used as a range: a damaged or hostile file is refused, it never traps.
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

        /// The content after a full box's version and flags.
        func fullBoxContent() throws(ImageProblem) -> Range<Int> {
            guard content.count >= 4 else { throw .truncated("the HEIC box \(type) is too short") }
            return (content.lowerBound + 4)..<content.upperBound
        }
    }

    /// The boxes in `range`, each checked to fit in it.
    static func boxes(in range: Range<Int>, of reader: ByteReader) throws(ImageProblem) -> [Box] {
        guard range.lowerBound >= 0, range.upperBound <= reader.bytes.count else { throw .truncated("a HEIC box lies outside the file") }
        var found: [Box] = []
        var offset = range.lowerBound
        while offset < range.upperBound {
            guard range.upperBound - offset >= 8 else { throw .truncated("the file ends inside a HEIC box header") }
            var size = try reader.uint32(at: offset)
            let type = try reader.fourCC(at: offset + 4)
            var header = 8
            if size == 1 {
                size = try reader.uint64(at: offset + 8)
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header, size <= range.upperBound - offset else { throw .truncated("the HEIC box \(type) runs past the end of its container") }
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
        let children = try boxes(in: meta.fullBoxContent(), of: reader)
        let extents = try spatialExtents(children, reader)
        guard let shown = extents.max(by: { $0.area < $1.area }) else { throw .truncated("the HEIC declares no image size") }
        let items = try itemTypes(children.first { $0.type == "iinf" }, reader)
        let locations = try children.first { $0.type == "iloc" }.map { box throws(ImageProblem) in
            try itemLocations(box, reader, itemData: children.first { $0.type == "idat" }?.content)
        } ?? [:]

        // A grid's canvas is what libheif allocates before it decodes a tile: it is read here from the grid item's
        // data, whatever `ispe` says.
        var canvases: [PixelSize] = []
        for (id, item) in items where item.type == "grid" {
            guard let parts = locations[id] else { throw .truncated("a HEIC grid has no data") }
            canvases.append(try gridCanvas(parts, reader))
        }

        // Metadata is wiped only inside image data (`mdat`, or `idat`'s content): an item placed over the file's own
        // structure would have the wipe break it, so such a file is refused.
        let data = top.filter { $0.type == "mdat" }.map(\.content) + children.filter { $0.type == "idat" }.map(\.content)
        var cleaned = bytes
        for (id, item) in items where item.isMetadata {
            for extent in locations[id] ?? [] {
                guard data.contains(where: { $0.lowerBound <= extent.lowerBound && extent.upperBound <= $0.upperBound }) else {
                    throw .truncated("a HEIC metadata item lies outside the image data")
                }
                for index in extent { cleaned[index] = 0 }
            }
        }
        return InspectedImage(
            format: .heic, width: shown.width, height: shown.height, bytes: cleaned, declaredSizes: extents + canvases, decodedWhole: true)
    }

    /// Every `ispe` property's size.
    private static func spatialExtents(_ children: [Box], _ reader: ByteReader) throws(ImageProblem) -> [PixelSize] {
        guard let properties = children.first(where: { $0.type == "iprp" }),
            let container = try boxes(in: properties.content, of: reader).first(where: { $0.type == "ipco" })
        else { return [] }
        var sizes: [PixelSize] = []
        for property in try boxes(in: container.content, of: reader) where property.type == "ispe" {
            let content = try property.fullBoxContent()
            guard content.count >= 8 else { throw .truncated("a HEIC image size is too short") }
            sizes.append(PixelSize(width: try reader.uint32(at: content.lowerBound), height: try reader.uint32(at: content.lowerBound + 4)))
        }
        return sizes
    }

    /// An item's type from `iinf`, and whether it is metadata to wipe (an `Exif` item, or a `mime` item holding XMP).
    struct ItemInfo {
        let type: String
        let isMetadata: Bool
    }

    /// The items `iinf` describes (version 2 and 3 entries; older entries carry no type and are skipped).
    private static func itemTypes(_ info: Box?, _ reader: ByteReader) throws(ImageProblem) -> [Int: ItemInfo] {
        guard let info else { return [:] }
        let content = try info.fullBoxContent()
        let version = try reader.uint8(at: info.content.lowerBound)
        let entriesStart = try ByteReader.sum(content.lowerBound, version == 0 ? 2 : 4)
        guard entriesStart <= content.upperBound else { throw .truncated("the HEIC item list is too short") }
        var items: [Int: ItemInfo] = [:]
        for entry in try boxes(in: entriesStart..<content.upperBound, of: reader) where entry.type == "infe" {
            let body = try entry.fullBoxContent()
            let entryVersion = try reader.uint8(at: entry.content.lowerBound)
            guard entryVersion >= 2 else { continue }
            let idWidth = entryVersion == 2 ? 2 : 4
            guard body.count >= idWidth + 2 + 4 else { throw .truncated("a HEIC item entry is too short") }
            let id = Int(try reader.field(at: body.lowerBound, width: idWidth))
            let typeOffset = body.lowerBound + idWidth + 2
            let type = try reader.fourCC(at: typeOffset)
            var isMetadata = type == "Exif"
            if type == "mime" {
                // item_name, then content_type: both NUL-terminated.
                let strings = reader.bytes[(typeOffset + 4)..<body.upperBound].split(separator: 0, omittingEmptySubsequences: false)
                if strings.count > 1 {
                    let contentType = String(decoding: strings[1], as: UTF8.self)
                    isMetadata = contentType.contains("xmp") || contentType.contains("rdf")
                }
            }
            items[id] = ItemInfo(type: type, isMetadata: isMetadata)
        }
        return items
    }

    /// Where in the file each item's bytes lie, from `iloc` (file offsets, or offsets into `idat`); every extent is
    /// checked to lie inside the file. Extents of other construction methods, and of length 0 ("to the end"), are not
    /// listed.
    private static func itemLocations(
        _ locations: Box, _ reader: ByteReader, itemData: Range<Int>?
    ) throws(ImageProblem) -> [Int: [Range<Int>]] {
        let content = try locations.fullBoxContent()
        let version = try reader.uint8(at: locations.content.lowerBound)
        var offset = content.lowerBound
        func read(_ width: Int) throws(ImageProblem) -> Int {
            guard offset <= content.upperBound - width else { throw .truncated("the HEIC item locations are cut off") }
            let value = try reader.field(at: offset, width: width)
            offset += width
            guard value < 1 << 62 else { throw .truncated("a HEIC item location is out of range") }
            return Int(value)
        }
        let sizes = try read(2)
        let (offsetSize, lengthSize, baseOffsetSize) = (sizes >> 12, (sizes >> 8) & 0xF, (sizes >> 4) & 0xF)
        let indexSize = version >= 1 ? sizes & 0xF : 0
        for width in [offsetSize, lengthSize, baseOffsetSize, indexSize] where ![0, 4, 8].contains(width) {
            throw .truncated("the HEIC item locations use an unknown field size")
        }
        let count = try read(version < 2 ? 2 : 4)
        var found: [Int: [Range<Int>]] = [:]
        for _ in 0..<count {
            let id = try read(version < 2 ? 2 : 4)
            let method = version >= 1 ? try read(2) & 0xF : 0
            _ = try read(2)  // data reference index
            let base = try read(baseOffsetSize)
            let extentCount = try read(2)
            // Extents of no bytes at all (every field width 0) each mean "the whole resource": nothing to list, and
            // nothing to walk 65,535 times.
            guard indexSize + offsetSize + lengthSize > 0 else { continue }
            for _ in 0..<extentCount {
                _ = try read(indexSize)
                let start = try read(offsetSize), length = try read(lengthSize)
                guard length > 0 else { continue }
                switch method {
                case 0:
                    found[id, default: []].append(try ByteReader.range(from: ByteReader.sum(base, start), length: length, within: 0..<reader.bytes.count))
                case 1:
                    guard let itemData else { throw .truncated("a HEIC item refers to item data that is missing") }
                    let begin = try ByteReader.sum(itemData.lowerBound, base, start)
                    found[id, default: []].append(try ByteReader.range(from: begin, length: length, within: itemData))
                default: continue
                }
            }
        }
        return found
    }

    /// The canvas a grid item's data declares (ISO/IEC 23008-12 `ImageGrid`: version, flags, rows − 1, columns − 1,
    /// then the output width and height in 16 or 32 bits).
    private static func gridCanvas(_ parts: [Range<Int>], _ reader: ByteReader) throws(ImageProblem) -> PixelSize {
        var data: [UInt8] = []
        for part in parts where data.count < 12 { data += reader.bytes[part.lowerBound..<min(part.upperBound, part.lowerBound + 12)] }
        let grid = ByteReader(bytes: data)
        let wide = try grid.uint8(at: 1) & 1 == 1
        let width = try grid.field(at: 4, width: wide ? 4 : 2), height = try grid.field(at: wide ? 8 : 6, width: wide ? 4 : 2)
        return PixelSize(width: Int(width), height: Int(height))
    }
}
