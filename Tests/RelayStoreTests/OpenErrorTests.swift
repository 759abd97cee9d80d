import Foundation
import RelayCore
import RelayPipeline
import RelayStore
import Testing

@Suite("Failing to open the SQLite store")
struct OpenErrorTests {
    @Test("A path under a regular file gives a StoreError naming the path and the setting to change")
    func pathUnderAFile() async throws {
        try await withTemporaryFolder { folder in
            let file = folder.path("plain-file")
            #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
            let path = file + "/sub/relay.sqlite"
            let error = try await #require(throws: StoreError.self) {
                try await SQLiteStore.open(path: path)
            }
            guard case .cannotOpen(let failedPath, _) = error else {
                Issue.record("Expected cannotOpen, got \(error)")
                return
            }
            #expect(failedPath == path)
            #expect(error.description.contains(path))
            #expect(error.description.contains("STORE_PATH"))
        }
    }

    @Test("A path directly inside a regular file gives a StoreError")
    func parentIsAFile() async throws {
        try await withTemporaryFolder { folder in
            let file = folder.path("plain-file")
            #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
            let error = try await #require(throws: StoreError.self) {
                try await SQLiteStore.open(path: file + "/relay.sqlite")
            }
            #expect(error.description.contains(file + "/relay.sqlite"))
            #expect(error.description.contains("is a file, not a folder"))
        }
    }

    @Test("A folder where the file should be gives a StoreError")
    func pathIsAFolder() async throws {
        try await withTemporaryFolder { folder in
            let path = folder.path("relay.sqlite")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let error = try await #require(throws: StoreError.self) {
                try await SQLiteStore.open(path: path)
            }
            #expect(error.description.hasPrefix("Cannot open the database at \(path)"))
        }
    }

    @Test("A file that is not a database gives a StoreError and is left untouched")
    func notADatabase() async throws {
        try await withTemporaryFolder { folder in
            let path = folder.path("notes.txt")
            let text = Data(String(repeating: "These are not the tables you are looking for.\n", count: 100).utf8)
            #expect(FileManager.default.createFile(atPath: path, contents: text))
            let error = try await #require(throws: StoreError.self) {
                try await SQLiteStore.open(path: path)
            }
            #expect(error.description.contains("not an SQLite database"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == text)
        }
    }
}
