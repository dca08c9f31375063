//! The benchmark's keyfile in a server or router pod: mongod refuses a keyfile any group can
//! read, and `fsGroup` makes the kubelet add group read to a Secret's files, so an init
//! container copies it with mode 0400 into an in-memory directory.

use k8s_openapi::api::core::v1::{
    Container, EmptyDirVolumeSource, KeyToPath, ResourceRequirements, SecretVolumeSource, Volume,
    VolumeMount,
};

use crate::api::MongoBenchmark;
use crate::operator::render::pod::read_only_container_security;
use crate::operator::render::secrets;

/// Where the keyfile Secret is mounted (group-readable under `fsGroup`, which mongod refuses).
pub const KEYFILE_SECRET_DIR: &str = "/etc/mongodb-keyfile-secret";
/// Where the init container puts the keyfile with mode 0400, for mongod.
pub const KEYFILE_DIR: &str = "/etc/mongodb-keyfile";
/// Name of the init container that copies the keyfile.
pub const KEYFILE_CONTAINER: &str = "keyfile";

/// What a pod needs to hand mongod or mongos the benchmark's keyfile: the Secret and an
/// in-memory directory as volumes, the mount of that directory, and the init container that
/// copies the key there with mode 0400.
pub(crate) struct Keyfile {
    pub mount: VolumeMount,
    pub volumes: Vec<Volume>,
    pub init_container: Container,
}

impl Keyfile {
    /// `resources` are the main container's: a pod is Guaranteed only when its init
    /// containers are too, and the larger of the two is what the pod requests.
    pub(crate) fn of(
        bench: &MongoBenchmark,
        image: &str,
        resources: &ResourceRequirements,
    ) -> Keyfile {
        let key = secrets::KEYFILE_KEY;
        let volumes = vec![
            Volume {
                name: "keyfile-secret".to_owned(),
                secret: Some(SecretVolumeSource {
                    secret_name: Some(secrets::keyfile_name(bench)),
                    items: Some(vec![KeyToPath {
                        key: key.to_owned(),
                        path: key.to_owned(),
                        ..KeyToPath::default()
                    }]),
                    default_mode: Some(0o400),
                    ..SecretVolumeSource::default()
                }),
                ..Volume::default()
            },
            Volume {
                name: "keyfile".to_owned(),
                empty_dir: Some(EmptyDirVolumeSource {
                    medium: Some("Memory".to_owned()),
                    ..EmptyDirVolumeSource::default()
                }),
                ..Volume::default()
            },
        ];
        // fsGroup makes the kubelet add group read to the Secret's files, and mongod refuses
        // a keyfile any group can read: a copy the same user makes is 0400.
        let init_container = Container {
            name: KEYFILE_CONTAINER.to_owned(),
            image: Some(image.to_owned()),
            command: Some(vec![
                "install".to_owned(),
                "-m".to_owned(),
                "0400".to_owned(),
                format!("{KEYFILE_SECRET_DIR}/{key}"),
                format!("{KEYFILE_DIR}/{key}"),
            ]),
            resources: Some(resources.clone()),
            security_context: Some(read_only_container_security()),
            volume_mounts: Some(vec![
                VolumeMount {
                    name: "keyfile-secret".to_owned(),
                    mount_path: KEYFILE_SECRET_DIR.to_owned(),
                    read_only: Some(true),
                    ..VolumeMount::default()
                },
                VolumeMount {
                    name: "keyfile".to_owned(),
                    mount_path: KEYFILE_DIR.to_owned(),
                    ..VolumeMount::default()
                },
            ]),
            ..Container::default()
        };
        Keyfile {
            mount: VolumeMount {
                name: "keyfile".to_owned(),
                mount_path: KEYFILE_DIR.to_owned(),
                read_only: Some(true),
                ..VolumeMount::default()
            },
            volumes,
            init_container,
        }
    }
}
