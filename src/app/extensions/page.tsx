import { ExtensionsView } from '../components/extensions/ExtensionsView';

export default function ExtensionsPage() {
  return <ExtensionsView />;
}
