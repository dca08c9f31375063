//! The hardware and kernel facts mongobench takes from `hostInfo`.

use mongodb::bson::Document;
use serde::{Deserialize, Serialize};

use super::fields::{Fields, ServerFigureError};

/// One `hostInfo` reply, reduced to what a result needs. Every figure is optional: FerretDB's
/// reply, for one, has an empty `extra` and no memory size.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct HostInfoFigures {
    /// `system.hostname`.
    pub hostname: Option<String>,
    /// `system.cpuArch` (`x86_64`, `aarch64`; FerretDB reports Go's `amd64`/`arm64`).
    pub cpu_arch: Option<String>,
    /// `system.numCores`: logical cores of the machine.
    pub num_cores: Option<u32>,
    /// `system.numCoresAvailableToProcess`: cores the process may use (affinity, cgroup);
    /// absent before MongoDB 6.0 and when the server could not tell.
    pub num_cores_available: Option<u32>,
    /// `system.memSizeMB`: machine memory (MiB).
    #[serde(rename = "memSizeMB")]
    pub mem_size_mb: Option<u64>,
    /// `system.memLimitMB`: memory the process may use (MiB), e.g. under a container limit.
    #[serde(rename = "memLimitMB")]
    pub mem_limit_mb: Option<u64>,
    /// `os.type` (`Linux`).
    pub os_type: Option<String>,
    /// `os.name` (distribution).
    pub os_name: Option<String>,
    /// `os.version`.
    pub os_version: Option<String>,
    /// `extra.kernelVersion`.
    pub kernel_version: Option<String>,
    /// `extra.libcVersion`.
    pub libc_version: Option<String>,
    /// `extra.cpuString`: CPU model name, when the platform reports one.
    pub cpu_model: Option<String>,
    /// `extra.cpuFrequencyMHz` (reported as text, e.g. "2600.000").
    #[serde(rename = "cpuFrequencyMHz")]
    pub cpu_frequency_mhz: Option<f64>,
    /// `extra.cpuFeatures`: the CPU flags, space-separated, as reported.
    pub cpu_features: Option<String>,
}

impl HostInfoFigures {
    /// Reads a `hostInfo` reply.
    ///
    /// # Errors
    /// [`ServerFigureError::WrongType`] when a field is present with an unusable type.
    pub fn from_document(doc: &Document) -> Result<HostInfoFigures, ServerFigureError> {
        let f = Fields::new(doc, "hostInfo");
        let cores = |path: &[&str], value: Option<u64>| {
            value
                .map(|v| {
                    u32::try_from(v).map_err(|_| ServerFigureError::WrongType {
                        document: "hostInfo",
                        path: path.join("."),
                        found: v.to_string(),
                        expected: "a core count below 2^32",
                    })
                })
                .transpose()
        };
        let num_cores_path = ["system", "numCores"];
        let available_path = ["system", "numCoresAvailableToProcess"];
        Ok(HostInfoFigures {
            hostname: f.string(&["system", "hostname"])?,
            cpu_arch: f.string(&["system", "cpuArch"])?,
            num_cores: cores(&num_cores_path, f.u64(&num_cores_path)?)?,
            num_cores_available: cores(
                &available_path,
                f.u64_or_negative_unknown(&available_path)?,
            )?,
            mem_size_mb: f.u64(&["system", "memSizeMB"])?,
            mem_limit_mb: f.u64(&["system", "memLimitMB"])?,
            os_type: f.string(&["os", "type"])?,
            os_name: f.string(&["os", "name"])?,
            os_version: f.string(&["os", "version"])?,
            kernel_version: f.string(&["extra", "kernelVersion"])?,
            libc_version: f.string(&["extra", "libcVersion"])?,
            cpu_model: f.string(&["extra", "cpuString"])?,
            cpu_frequency_mhz: f.number_or_text(&["extra", "cpuFrequencyMHz"])?,
            cpu_features: f.string(&["extra", "cpuFeatures"])?,
        })
    }

    /// The cores the server process can keep busy: the available count when reported, else the
    /// machine's.
    pub fn usable_cores(&self) -> Option<u32> {
        self.num_cores_available.or(self.num_cores)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::server::fixture;

    #[test]
    fn mongod_8_0_host_info_is_read() {
        let h = HostInfoFigures::from_document(&fixture("mongod-8.0-hostInfo.json")).unwrap();
        assert_eq!(h.hostname.as_deref(), Some("bench-psmdb80-n2-0:27017"));
        assert_eq!(h.cpu_arch.as_deref(), Some("x86_64"));
        assert_eq!(h.num_cores, Some(8));
        assert_eq!(h.num_cores_available, Some(4));
        assert_eq!(h.usable_cores(), Some(4));
        assert_eq!(h.mem_size_mb, Some(32_093));
        assert_eq!(h.mem_limit_mb, Some(16_384));
        assert_eq!(h.os_type.as_deref(), Some("Linux"));
        assert_eq!(
            h.os_name.as_deref(),
            Some("Red Hat Enterprise Linux release 9.5 (Plow)")
        );
        assert_eq!(h.kernel_version.as_deref(), Some("6.6.56+"));
        assert_eq!(
            h.cpu_model.as_deref(),
            Some("Intel(R) Xeon(R) CPU @ 2.60GHz")
        );
        assert_eq!(h.cpu_frequency_mhz, Some(2600.0));
        let features = h.cpu_features.unwrap();
        assert!(features.starts_with("fpu vme de pse tsc"));
        assert!(features.split(' ').any(|f| f == "avx512f"));
    }

    #[test]
    fn ferretdb_host_info_has_no_extra_and_no_memory() {
        let h = HostInfoFigures::from_document(&fixture("ferretdb-1.24-hostInfo.json")).unwrap();
        assert!(h.hostname.is_some());
        assert!(h.num_cores.is_some());
        assert_eq!(h.num_cores_available, None);
        assert_eq!(h.mem_size_mb, None);
        assert_eq!(h.os_type.as_deref(), Some("Linux"));
        assert_eq!(h.kernel_version, None);
        assert_eq!(h.cpu_model, None);
        assert_eq!(h.cpu_frequency_mhz, None);
        assert_eq!(h.cpu_features, None);
        assert_eq!(h.usable_cores(), h.num_cores);
    }

    #[test]
    fn unknown_available_cores_is_none() {
        let doc =
            mongodb::bson::doc! { "system": { "numCores": 2, "numCoresAvailableToProcess": -1 } };
        let h = HostInfoFigures::from_document(&doc).unwrap();
        assert_eq!((h.num_cores, h.num_cores_available), (Some(2), None));
    }
}
