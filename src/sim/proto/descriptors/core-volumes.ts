/**
 * Protobuf field descriptors: k8s.io/api/core/v1: volumes and volume sources (pod volumes, projections, PersistentVolume sources).
 * Field numbers and types from the published `generated.proto` (../shared/reference/k8s-proto); the notation is
 * read by `../schema.ts`. `?` marks a field that is a pointer in Go, where a zero value is kept instead of dropped.
 */
export const CORE_VOLUMES = `
PersistentVolumeSpec: 1 capacity {}Quantity, 2 ...persistentVolumeSource PersistentVolumeSource,
  3 accessModes []string, 4 claimRef ObjectReference, 5 persistentVolumeReclaimPolicy string,
  6 storageClassName string, 7 mountOptions []string, 8 volumeMode? string, 9 nodeAffinity VolumeNodeAffinity,
  10 volumeAttributesClassName? string
Volume: 1 name string, 2 ...volumeSource VolumeSource
PersistentVolumeSource: 1 gcePersistentDisk GCEPersistentDiskVolumeSource,
  2 awsElasticBlockStore AWSElasticBlockStoreVolumeSource, 3 hostPath HostPathVolumeSource,
  4 glusterfs GlusterfsPersistentVolumeSource, 5 nfs NFSVolumeSource, 6 rbd RBDPersistentVolumeSource,
  7 iscsi ISCSIPersistentVolumeSource, 8 cinder CinderPersistentVolumeSource, 9 cephfs CephFSPersistentVolumeSource,
  10 fc FCVolumeSource, 11 flocker FlockerVolumeSource, 12 flexVolume FlexPersistentVolumeSource,
  13 azureFile AzureFilePersistentVolumeSource, 14 vsphereVolume VsphereVirtualDiskVolumeSource,
  15 quobyte QuobyteVolumeSource, 16 azureDisk AzureDiskVolumeSource,
  17 photonPersistentDisk PhotonPersistentDiskVolumeSource, 18 portworxVolume PortworxVolumeSource,
  19 scaleIO ScaleIOPersistentVolumeSource, 20 local LocalVolumeSource,
  21 storageos StorageOSPersistentVolumeSource, 22 csi CSIPersistentVolumeSource
VolumeNodeAffinity: 1 required NodeSelector
VolumeSource: 1 hostPath HostPathVolumeSource, 2 emptyDir EmptyDirVolumeSource,
  3 gcePersistentDisk GCEPersistentDiskVolumeSource, 4 awsElasticBlockStore AWSElasticBlockStoreVolumeSource,
  5 gitRepo GitRepoVolumeSource, 6 secret SecretVolumeSource, 7 nfs NFSVolumeSource, 8 iscsi ISCSIVolumeSource,
  9 glusterfs GlusterfsVolumeSource, 10 persistentVolumeClaim PersistentVolumeClaimVolumeSource,
  11 rbd RBDVolumeSource, 12 flexVolume FlexVolumeSource, 13 cinder CinderVolumeSource,
  14 cephfs CephFSVolumeSource, 15 flocker FlockerVolumeSource, 16 downwardAPI DownwardAPIVolumeSource,
  17 fc FCVolumeSource, 18 azureFile AzureFileVolumeSource, 19 configMap ConfigMapVolumeSource,
  20 vsphereVolume VsphereVirtualDiskVolumeSource, 21 quobyte QuobyteVolumeSource,
  22 azureDisk AzureDiskVolumeSource, 23 photonPersistentDisk PhotonPersistentDiskVolumeSource,
  24 portworxVolume PortworxVolumeSource, 25 scaleIO ScaleIOVolumeSource, 26 projected ProjectedVolumeSource,
  27 storageos StorageOSVolumeSource, 28 csi CSIVolumeSource, 29 ephemeral EphemeralVolumeSource,
  30 image ImageVolumeSource
GCEPersistentDiskVolumeSource: 1 pdName string, 2 fsType string, 3 partition int32, 4 readOnly bool
AWSElasticBlockStoreVolumeSource: 1 volumeID string, 2 fsType string, 3 partition int32, 4 readOnly bool
HostPathVolumeSource: 1 path string, 2 type? string
GlusterfsPersistentVolumeSource: 1 endpoints string, 2 path string, 3 readOnly bool, 4 endpointsNamespace string
NFSVolumeSource: 1 server string, 2 path string, 3 readOnly bool
RBDPersistentVolumeSource: 1 monitors []string, 2 image string, 3 fsType string, 4 pool string, 5 user string,
  6 keyring string, 7 secretRef SecretReference, 8 readOnly bool
ISCSIPersistentVolumeSource: 1 targetPortal string, 2 iqn string, 3 lun int32, 4 iscsiInterface string,
  5 fsType string, 6 readOnly bool, 7 portals []string, 8 chapAuthDiscovery bool, 10 secretRef SecretReference,
  11 chapAuthSession bool, 12 initiatorName? string
CinderPersistentVolumeSource: 1 volumeID string, 2 fsType string, 3 readOnly bool, 4 secretRef SecretReference
CephFSPersistentVolumeSource: 1 monitors []string, 2 path string, 3 user string, 4 secretFile string,
  5 secretRef SecretReference, 6 readOnly bool
FCVolumeSource: 1 targetWWNs []string, 2 lun int32, 3 fsType string, 4 readOnly bool, 5 wwids []string
FlockerVolumeSource: 1 datasetName string, 2 datasetUUID string
FlexPersistentVolumeSource: 1 driver string, 2 fsType string, 3 secretRef SecretReference, 4 readOnly bool,
  5 options {}string
AzureFilePersistentVolumeSource: 1 secretName string, 2 shareName string, 3 readOnly bool, 4 secretNamespace? string
VsphereVirtualDiskVolumeSource: 1 volumePath string, 2 fsType string, 3 storagePolicyName string,
  4 storagePolicyID string
QuobyteVolumeSource: 1 registry string, 2 volume string, 3 readOnly bool, 4 user string, 5 group string,
  6 tenant string
AzureDiskVolumeSource: 1 diskName string, 2 diskURI string, 3 cachingMode? string, 4 fsType? string,
  5 readOnly? bool, 6 kind? string
PhotonPersistentDiskVolumeSource: 1 pdID string, 2 fsType string
PortworxVolumeSource: 1 volumeID string, 2 fsType string, 3 readOnly bool
ScaleIOPersistentVolumeSource: 1 gateway string, 2 system string, 3 secretRef SecretReference, 4 sslEnabled bool,
  5 protectionDomain string, 6 storagePool string, 7 storageMode string, 8 volumeName string, 9 fsType string,
  10 readOnly bool
LocalVolumeSource: 1 path string, 2 fsType? string
StorageOSPersistentVolumeSource: 1 volumeName string, 2 volumeNamespace string, 3 fsType string, 4 readOnly bool,
  5 secretRef ObjectReference
CSIPersistentVolumeSource: 1 driver string, 2 volumeHandle string, 3 readOnly bool, 4 fsType string,
  5 volumeAttributes {}string, 6 controllerPublishSecretRef SecretReference, 7 nodeStageSecretRef SecretReference,
  8 nodePublishSecretRef SecretReference, 9 controllerExpandSecretRef SecretReference,
  10 nodeExpandSecretRef SecretReference
EmptyDirVolumeSource: 1 medium string, 2 sizeLimit Quantity, 3 mode? int32
GitRepoVolumeSource: 1 repository string, 2 revision string, 3 directory string
SecretVolumeSource: 1 secretName string, 2 items []KeyToPath, 3 defaultMode? int32, 4 optional? bool,
  5 defaultUser? int64
ISCSIVolumeSource: 1 targetPortal string, 2 iqn string, 3 lun int32, 4 iscsiInterface string, 5 fsType string,
  6 readOnly bool, 7 portals []string, 8 chapAuthDiscovery bool, 10 secretRef LocalObjectReference,
  11 chapAuthSession bool, 12 initiatorName? string
GlusterfsVolumeSource: 1 endpoints string, 2 path string, 3 readOnly bool
PersistentVolumeClaimVolumeSource: 1 claimName string, 2 readOnly bool
RBDVolumeSource: 1 monitors []string, 2 image string, 3 fsType string, 4 pool string, 5 user string,
  6 keyring string, 7 secretRef LocalObjectReference, 8 readOnly bool
FlexVolumeSource: 1 driver string, 2 fsType string, 3 secretRef LocalObjectReference, 4 readOnly bool,
  5 options {}string
CinderVolumeSource: 1 volumeID string, 2 fsType string, 3 readOnly bool, 4 secretRef LocalObjectReference
CephFSVolumeSource: 1 monitors []string, 2 path string, 3 user string, 4 secretFile string,
  5 secretRef LocalObjectReference, 6 readOnly bool
DownwardAPIVolumeSource: 1 items []DownwardAPIVolumeFile, 2 defaultMode? int32, 3 defaultUser? int64
AzureFileVolumeSource: 1 secretName string, 2 shareName string, 3 readOnly bool
ConfigMapVolumeSource: 1 ...localObjectReference LocalObjectReference, 2 items []KeyToPath, 3 defaultMode? int32,
  4 optional? bool, 5 defaultUser? int64
ProjectedVolumeSource: 1 sources []VolumeProjection, 2 defaultMode? int32, 3 defaultUser? int64
ScaleIOVolumeSource: 1 gateway string, 2 system string, 3 secretRef LocalObjectReference, 4 sslEnabled bool,
  5 protectionDomain string, 6 storagePool string, 7 storageMode string, 8 volumeName string, 9 fsType string,
  10 readOnly bool
StorageOSVolumeSource: 1 volumeName string, 2 volumeNamespace string, 3 fsType string, 4 readOnly bool,
  5 secretRef LocalObjectReference
CSIVolumeSource: 1 driver string, 2 readOnly? bool, 3 fsType? string, 4 volumeAttributes {}string,
  5 nodePublishSecretRef LocalObjectReference
EphemeralVolumeSource: 1 volumeClaimTemplate PersistentVolumeClaimTemplate
ImageVolumeSource: 1 reference string, 2 pullPolicy string
SecretReference: 1 name string, 2 namespace string
KeyToPath: 1 key string, 2 path string, 3 mode? int32, 4 user? int64
DownwardAPIVolumeFile: 1 path string, 2 fieldRef ObjectFieldSelector, 3 resourceFieldRef ResourceFieldSelector,
  4 mode? int32, 5 user? int64
VolumeProjection: 1 secret SecretProjection, 2 downwardAPI DownwardAPIProjection, 3 configMap ConfigMapProjection,
  4 serviceAccountToken ServiceAccountTokenProjection, 5 clusterTrustBundle ClusterTrustBundleProjection,
  6 podCertificate PodCertificateProjection
PersistentVolumeClaimTemplate: 1 metadata ObjectMeta, 2 spec PersistentVolumeClaimSpec
ObjectFieldSelector: 1 apiVersion string, 2 fieldPath string
ResourceFieldSelector: 1 containerName string, 2 resource string, 3 divisor Quantity
SecretProjection: 1 ...localObjectReference LocalObjectReference, 2 items []KeyToPath, 4 optional? bool
DownwardAPIProjection: 1 items []DownwardAPIVolumeFile
ConfigMapProjection: 1 ...localObjectReference LocalObjectReference, 2 items []KeyToPath, 4 optional? bool
ServiceAccountTokenProjection: 1 audience string, 2 expirationSeconds? int64, 3 path string, 4 user? int64
ClusterTrustBundleProjection: 1 name? string, 2 signerName? string, 3 labelSelector LabelSelector, 4 path string,
  5 optional? bool, 6 user? int64
PodCertificateProjection: 1 signerName string, 2 keyType string, 3 maxExpirationSeconds? int32,
  4 credentialBundlePath string, 5 keyPath string, 6 certificateChainPath string, 7 userAnnotations {}string,
  8 user? int64
`;
