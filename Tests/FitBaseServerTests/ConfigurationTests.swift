import Logging
import Testing

@testable import FitBaseServer

/// Flags over environment over defaults; every bad value stops start-up naming its setting.
@Suite struct ConfigurationTests {
    @Test func defaultsWorkLocally() throws {
        let configuration = try ServerConfiguration.resolve(environment: [:])
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.dataDirectory == "./fitbase-data")
        #expect(configuration.database == .sqlite(path: ServerConfiguration.defaultDatabasePath(in: "./fitbase-data")))
        #expect(configuration.database.description.hasSuffix("fitbase-data/fitbase.sqlite"))
        #expect(configuration.logLevel == .info)
        #expect(configuration.publicURL == "http://127.0.0.1:8080")
        #expect(configuration.maxBodyBytes == 1_048_576)
    }

    @Test func environmentOverridesDefaults() throws {
        let configuration = try ServerConfiguration.resolve(environment: [
            "FITBASE_HOST": "0.0.0.0", "FITBASE_PORT": "9000", "FITBASE_DATA_DIR": "/var/lib/fitbase", "FITBASE_MAIL": "log",
            "FITBASE_DATABASE_URL": "postgres://u:p@db:5432/fit", "FITBASE_LOG_LEVEL": "DEBUG",
            "FITBASE_PUBLIC_URL": "https://api.example.com/", "FITBASE_MAX_BODY_BYTES": "2048",
        ])
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 9000)
        #expect(configuration.dataDirectory == "/var/lib/fitbase")
        #expect(configuration.database == .postgres(url: "postgres://u:p@db:5432/fit"))
        #expect(configuration.logLevel == .debug)
        #expect(configuration.publicURL == "https://api.example.com")
        #expect(configuration.maxBodyBytes == 2048)
    }

    @Test func flagsOverrideEnvironment() throws {
        let configuration = try ServerConfiguration.resolve(
            flags: .init(port: "0", dataDirectory: "/tmp/x", logLevel: "error"),
            environment: ["FITBASE_PORT": "9000", "FITBASE_DATA_DIR": "/var/lib/fitbase", "FITBASE_LOG_LEVEL": "debug"]
        )
        #expect(configuration.port == 0)
        #expect(configuration.dataDirectory == "/tmp/x")
        #expect(configuration.database == .sqlite(path: "/tmp/x/fitbase.sqlite"))
        #expect(configuration.logLevel == .error)
    }

    @Test(arguments: [
        (ServerConfiguration.Overrides(port: "abc"), "port", "--port"),
        (ServerConfiguration.Overrides(port: "70000"), "port", "--port"),
        (ServerConfiguration.Overrides(port: "-1"), "port", "--port"),
        (ServerConfiguration.Overrides(host: "bad host"), "host", "--host"),
        (ServerConfiguration.Overrides(dataDirectory: " "), "data-dir", "--data-dir"),
        (ServerConfiguration.Overrides(databaseURL: "mysql://x"), "database-url", "--database-url"),
        (ServerConfiguration.Overrides(logLevel: "loud"), "log-level", "--log-level"),
        (ServerConfiguration.Overrides(publicURL: "ftp://x"), "public-url", "--public-url"),
        (ServerConfiguration.Overrides(publicURL: "not a url"), "public-url", "--public-url"),
        (ServerConfiguration.Overrides(maxBodyBytes: "0"), "max-body-bytes", "--max-body-bytes"),
        (ServerConfiguration.Overrides(maxBodyBytes: "1MB"), "max-body-bytes", "--max-body-bytes"),
    ])
    func invalidFlagsNameTheirSetting(flags: ServerConfiguration.Overrides, setting: String, source: String) {
        #expect {
            try ServerConfiguration.resolve(flags: flags, environment: [:])
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.setting == setting && error.source == source
                && error.description.contains(setting) && !error.description.contains("\n")
        }
    }

    @Test func invalidEnvironmentNamesTheVariable() {
        #expect(throws: ConfigurationError(setting: "port", source: "FITBASE_PORT", value: "eighty", expected: "an integer from 0 to 65535")) {
            try ServerConfiguration.resolve(environment: ["FITBASE_PORT": "eighty"])
        }
    }

    @Test func databaseURLForms() {
        #expect(DatabaseLocation(parsing: "sqlite:///var/data/f.sqlite") == .sqlite(path: "/var/data/f.sqlite"))
        #expect(DatabaseLocation(parsing: "sqlite://relative/f.sqlite") == .sqlite(path: "relative/f.sqlite"))
        #expect(DatabaseLocation(parsing: "sqlite:f.sqlite") == .sqlite(path: "f.sqlite"))
        #expect(DatabaseLocation(parsing: "/plain/path.db") == .sqlite(path: "/plain/path.db"))
        #expect(DatabaseLocation(parsing: "postgres://u@h/db") == .postgres(url: "postgres://u@h/db"))
        #expect(DatabaseLocation(parsing: "postgresql://u@h/db") == .postgres(url: "postgresql://u@h/db"))
        #expect(DatabaseLocation(parsing: "mysql://u@h/db") == nil)
        #expect(DatabaseLocation(parsing: "sqlite://") == nil)
        #expect(DatabaseLocation(parsing: "") == nil)
    }

    @Test func printedDatabaseURLHidesThePassword() {
        let location = DatabaseLocation.postgres(url: "postgres://fit:hunter2@db:5432/fit")
        #expect(!location.description.contains("hunter2"))
        #expect(location.description.contains("db:5432/fit"))
    }
}
