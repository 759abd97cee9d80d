import Foundation
import Logging
import RelayCore
import RelayPlatform
import RelayTestSupport
import Testing

@testable import TeamsAdapter

/// `rhea-relay register teams` (issue 42, point 4): the zip an admin uploads holds the manifest
/// for the configured app id, and both icons at the sizes Teams asks for.
@Suite("Teams: the app package")
struct TeamsAppPackageTests {
    @Test func registerWritesTheZipWithTheManifestAndIcons() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("teams-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("app.zip").path
        let platform = TeamsPlatform(configuration: TeamsConfiguration(appID: "12345678-1234-4234-8234-123456789abc", appPassword: TeamsSecret("x")))
        let lines = try await platform.register(RegistrationRequest(publicURL: "https://relay.example.com", outputPath: path), logger: .init(label: "t"))
        #expect(lines.first?.hasPrefix("Wrote \(path)") == true)
        #expect(lines.contains { $0.contains("https://relay.example.com/teams/messages") })
        let files = try Self.unzip(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(files.map(\.name) == ["manifest.json", "color.png", "outline.png"])
        let manifest = try #require(JSONValue.parse(files[0].bytes))
        #expect(manifest["id"]?.stringValue == "12345678-1234-4234-8234-123456789abc")
        #expect(manifest["bots"]?[0]?["botId"]?.stringValue == "12345678-1234-4234-8234-123456789abc")
        #expect(manifest["bots"]?[0]?["commandLists"]?[0]?["commands"]?.arrayValue?.count == 10)
        #expect(manifest["composeExtensions"]?[0]?["commands"]?[0]?["id"]?.stringValue == TeamsInbound.factCheckCommand)
        #expect(manifest["composeExtensions"]?[0]?["commands"]?[0]?["context"] == ["message"])
        #expect(Self.pngSize(files[1].bytes) == [192, 192])
        #expect(Self.pngSize(files[2].bytes) == [32, 32])
        // Checked by another implementation too: Python's zipfile (every CRC) and zlib (each
        // PNG's chunks and its image data, a byte per row plus four per pixel).
        let check = """
            import sys, zipfile, zlib, struct
            z = zipfile.ZipFile(sys.argv[1])
            assert z.testzip() is None
            for name in ("color.png", "outline.png"):
                data = z.read(name); at = 8; idat = b""
                while at < len(data):
                    (length,) = struct.unpack(">I", data[at:at+4]); kind = data[at+4:at+8]; body = data[at+8:at+8+length]
                    assert zlib.crc32(kind + body) == struct.unpack(">I", data[at+8+length:at+12+length])[0], name
                    if kind == b"IHDR": width, height = struct.unpack(">II", body[:8])
                    if kind == b"IDAT": idat += body
                    at += 12 + length
                assert len(zlib.decompress(idat)) == height * (width * 4 + 1), name
            print("ok")
            """
        let result = try await runProcess(["python3", "-c", check, path], in: directory.path, timeout: .seconds(30), step: "check the zip")
        #expect(result.status == 0 && result.output.contains("ok"), "\(result.output)")
    }

    @Test func registerWithoutAnAppIDSaysWhatToSet() async throws {
        let platform = TeamsPlatform(configuration: TeamsConfiguration())
        await #expect(throws: ConfigurationError.self) {
            try await platform.register(RegistrationRequest(outputPath: "/nonexistent/x.zip"), logger: .init(label: "t"))
        }
    }

    /// bots/teams/manifest.json is the manifest for `TEAMS_APP_ID`, as `register` writes it.
    @Test func theCheckedInManifestIsWhatRegisterWrites() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let file = try String(contentsOf: root.appendingPathComponent("bots/teams/manifest.json"), encoding: .utf8)
        #expect(file == TeamsAppPackage.manifestText())
    }

    /// The archive's stored entries, read by their local headers, each checked against its CRC.
    static func unzip(_ bytes: [UInt8]) throws -> [(name: String, bytes: [UInt8])] {
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) } }
        var files: [(String, [UInt8])] = []
        var at = 0
        while at + 30 <= bytes.count, u32(at) == 0x0403_4B50 {
            #expect(u16(at + 8) == 0, "stored")
            let size = Int(u32(at + 18))
            let nameLength = u16(at + 26)
            let name = String(decoding: bytes[(at + 30)..<(at + 30 + nameLength)], as: UTF8.self)
            let start = at + 30 + nameLength + u16(at + 28)
            let content = Array(bytes[start..<(start + size)])
            #expect(CRC32.checksum(content) == u32(at + 14), "\(name)'s CRC")
            files.append((name, content))
            at = start + size
        }
        return files
    }

    static func pngSize(_ bytes: [UInt8]) -> [Int]? {
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), bytes.count > 24 else { return nil }
        func be(_ at: Int) -> Int { (0..<4).reduce(0) { $0 << 8 | Int(bytes[at + $1]) } }
        return [be(16), be(20)]
    }
}
