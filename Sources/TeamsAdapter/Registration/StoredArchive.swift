/// The two file formats a Teams app package needs, written plainly: a ZIP archive of stored
/// (uncompressed) entries, and PNG images whose zlib stream is stored blocks. Both are a few KB
/// here (a manifest and two small icons), and neither format requires compression: no library
/// of the stack writes them, and a deflater would be more code than the saving is worth.
enum StoredArchive {
    /// A ZIP archive (PKWARE APPNOTE 6.3: local headers, central directory, end record) of
    /// `files`, in order, stored, dated 1980-01-01 so the same files make the same bytes.
    static func zip(_ files: [(name: String, bytes: [UInt8])]) -> [UInt8] {
        var out: [UInt8] = []
        var central: [UInt8] = []
        for file in files {
            let name = Array(file.name.utf8)
            let crc = CRC32.checksum(file.bytes)
            let offset = UInt32(out.count)
            out += le32(0x0403_4B50) + le16(20) + le16(0x0800) + le16(0) + le16(0) + le16(0x21)
            out += le32(crc) + le32(UInt32(file.bytes.count)) + le32(UInt32(file.bytes.count)) + le16(UInt16(name.count)) + le16(0)
            out += name + file.bytes
            central += le32(0x0201_4B50) + le16(20) + le16(20) + le16(0x0800) + le16(0) + le16(0) + le16(0x21)
            central += le32(crc) + le32(UInt32(file.bytes.count)) + le32(UInt32(file.bytes.count)) + le16(UInt16(name.count))
            central += le16(0) + le16(0) + le16(0) + le16(0) + le32(0) + le32(offset) + name
        }
        let start = UInt32(out.count)
        out += central
        out += le32(0x0605_4B50) + le16(0) + le16(0) + le16(UInt16(files.count)) + le16(UInt16(files.count))
        out += le32(UInt32(central.count)) + le32(start) + le16(0)
        return out
    }

    /// A PNG (ISO 15948) of `width` × `height` pixels of 8-bit RGBA, `pixels` row by row.
    static func png(width: Int, height: Int, pixels: [UInt8]) -> [UInt8] {
        precondition(pixels.count == width * height * 4, "RGBA pixels")
        var raw: [UInt8] = []
        raw.reserveCapacity(height * (width * 4 + 1))
        for row in 0..<height {
            raw.append(0)  // filter: none
            raw += pixels[(row * width * 4)..<((row + 1) * width * 4)]
        }
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += chunk("IHDR", be32(UInt32(width)) + be32(UInt32(height)) + [8, 6, 0, 0, 0])
        out += chunk("IDAT", zlibStored(raw))
        out += chunk("IEND", [])
        return out
    }

    /// A zlib stream (RFC 1950) of stored deflate blocks (RFC 1951 §3.2.4).
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var index = 0
        repeat {
            let count = min(65_535, data.count - index)
            let last: UInt8 = index + count == data.count ? 1 : 0
            out.append(last)
            out += le16(UInt16(count)) + le16(~UInt16(count))
            out += data[index..<(index + count)]
            index += count
        } while index < data.count
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return out + be32(b << 16 | a)
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return be32(UInt32(data.count)) + typed + be32(CRC32.checksum(typed))
    }

    static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
    static func be32(_ value: UInt32) -> [UInt8] { le32(value).reversed() }
}

/// CRC-32 (IEEE 802.3, reflected, as ZIP and PNG use it).
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
